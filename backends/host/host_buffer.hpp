// SPDX-License-Identifier: Apache-2.0
// A host-backend buffer: two separate page-aligned host allocations, one playing the device;
// or, for a shareable buffer (XFER_ALLOC_SHAREABLE, or imported), both views in one sealed memfd
// that other processes map too (host_shared.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "host_context.hpp"
#include <xfer/xfer_backend.h>
#include <xfer_plugin/table.hpp>

namespace xfer::host {

class HostStorage;

// The views of live buffers, by address (one set for the process: host_devices.hpp). A raw
// copy (xfer_memcpy_async / xfer_memcpy_batch_async) names plain pointers; looking them up here
// lets the queued copy hold the storage of any buffer view it touches, so xfer_free of that
// buffer is deferred in stream order exactly as for buffer copies (never a use-after-free),
// whichever context the buffer belongs to.
class LiveViews {
  public:
    void add(const std::shared_ptr<HostStorage> &storage);
    void remove(const HostStorage &storage) noexcept;
    // The storage whose host or device view contains `p`, or null.
    std::shared_ptr<HostStorage> find(const void *p) const;
    // fork() handlers (host_devices.cpp): the lock held across fork().
    void lock_for_fork() { mutex_.lock(); }
    void unlock_after_fork() { mutex_.unlock(); }

  private:
    struct Range {
        std::uintptr_t end;
        std::weak_ptr<HostStorage> storage;
    };
    mutable std::mutex mutex_;
    std::map<std::uintptr_t, Range> ranges_; // by start address
};

// The memory of a buffer. Reference-counted: the buffer handle holds one reference and every
// queued copy another, so xfer_free never releases memory a queued copy still uses (the last
// reference, possibly a worker thread's, releases it: deferred free in stream order).
class HostStorage {
  public:
    // Reserves `bytes` on the emulated device and allocates both views. Reports and returns
    // XFER_ERROR_OUT_OF_MEMORY (nothing allocated or reserved) when either does not fit.
    // The storage is listed in `views` until it is destroyed.
    static xfer_status create(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                              std::size_t bytes, std::shared_ptr<HostStorage> *out);

    // The same, both views in a new sealed memfd (shareable: export_fd is valid).
    static xfer_status create_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                     std::size_t bytes, std::shared_ptr<HostStorage> *out);
    // Maps the memory another process's create_shared made (`fd` borrowed: a duplicate is kept).
    // Checks that fd is a sealed memfd of the size `bytes` needs; XFER_ERROR_INVALID_ARGUMENT
    // with a message saying what, otherwise.
    static xfer_status import_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                     int fd, std::size_t bytes, std::shared_ptr<HostStorage> *out);

    ~HostStorage();
    HostStorage(const HostStorage &) = delete;
    HostStorage &operator=(const HostStorage &) = delete;

    unsigned char *host_view() const noexcept { return host_; }
    unsigned char *device_view() const noexcept { return device_; }
    std::size_t size() const noexcept { return bytes_; }
    // The memfd of a shareable storage (-1: not shareable).
    int shared_fd() const noexcept { return memfd_; }

  private:
    HostStorage(std::shared_ptr<DeviceMemoryAccount> account, std::size_t bytes, unsigned char *host,
                unsigned char *device) noexcept;
    // Reserves the emulated device's bytes for a shareable storage and maps both views from `fd`
    // (taken: kept by the storage, or closed on failure). `what` names the entry in messages.
    static xfer_status map_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                  int fd, std::size_t bytes, const char *what, std::shared_ptr<HostStorage> *out);
    // Lists a storage that owns its memory in `views` and hands it out.
    static xfer_status publish(std::unique_ptr<HostStorage> owner, std::shared_ptr<LiveViews> views,
                               std::shared_ptr<HostStorage> *out);

    int memfd_ = -1;               // shareable: the memfd both views are mapped from
    std::size_t mapped_bytes_ = 0; // shareable: the mapping's size (both views)

    std::shared_ptr<DeviceMemoryAccount> account_;
    std::shared_ptr<LiveViews> views_; // set once listed there
    std::size_t bytes_;
    unsigned char *host_;
    unsigned char *device_;
};

// What the core holds as the backend's buffer object.
struct HostBuffer {
    std::shared_ptr<HostStorage> storage;
};

// The strategy as facts, from which the table's capability bits are derived: two views (two
// allocations), a buffer copy is a memcpy between them, queued on the stream's worker thread
// so that the call returns at once.
constexpr plugin::BufferFacts kBufferFacts{plugin::Views::separate, plugin::Movement::copy, plugin::Completion::queued};
static_assert(plugin::consistent(kBufferFacts));
static_assert(plugin::caps_of(kBufferFacts) == XFER_CAP_ASYNC_COPY,
              "host: separate views, copies queued on a worker thread: asynchronous copies, nothing more");

} // namespace xfer::host

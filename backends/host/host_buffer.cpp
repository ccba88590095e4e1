// SPDX-License-Identifier: Apache-2.0
#include "host_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <xfer_plugin/errors.hpp>
#include <xfer_plugin/shared_memory.hpp>

namespace xfer::host {
namespace {
struct FreeDeleter {
    void operator()(unsigned char *p) const noexcept { std::free(p); }
};
using Block = std::unique_ptr<unsigned char, FreeDeleter>;

// Page alignment matches what the CUDA backends hand out, so user code tuned on host keeps
// its alignment assumptions on a GPU.
xfer_status allocate_view(std::size_t bytes, const char *which, Block *out) {
    void *p = nullptr;
    const int rc = posix_memalign(&p, plugin::page_bytes(), bytes);
    if (rc != 0) {
        return plugin::fail(XFER_ERROR_OUT_OF_MEMORY, "posix_memalign(%zu bytes, %s): %s (errno %d)", bytes, which,
                            std::strerror(rc), rc);
    }
    out->reset(static_cast<unsigned char *>(p));
    return XFER_SUCCESS;
}

// Gives back a device-memory reservation unless it was handed on to a HostStorage.
class Reservation {
  public:
    Reservation(DeviceMemoryAccount &account, std::size_t bytes) noexcept : account_(account), bytes_(bytes) {}
    ~Reservation() {
        if (bytes_ != 0) {
            account_.release(bytes_);
        }
    }
    void keep() noexcept { bytes_ = 0; }

  private:
    DeviceMemoryAccount &account_;
    std::size_t bytes_;
};

// Reserves `bytes` of the emulated device for a buffer; XFER_ERROR_OUT_OF_MEMORY (reported,
// naming `what`) when they do not fit. The caller releases it (Reservation) unless kept.
xfer_status reserve(DeviceMemoryAccount &account, std::size_t bytes, const char *what) {
    if (!account.reserve(bytes)) {
        const auto capacity = account.capacity();
        const auto used = account.used();
        // Where the capacity came from, so the user knows which knob to turn.
        const char *source = account.capacity_from_param()
                                 ? "set by the device_memory parameter"
                                 : "half the physical RAM, as device_memory is 0: each buffer takes its size twice";
        return plugin::fail(XFER_ERROR_OUT_OF_MEMORY,
                            "host %s: emulated device memory exhausted: %zu bytes requested, %llu of %llu "
                            "bytes free on this device, all its contexts together (capacity %s)",
                            what, bytes, static_cast<unsigned long long>(used > capacity ? 0 : capacity - used),
                            static_cast<unsigned long long>(capacity), source);
    }
    return XFER_SUCCESS;
}

// A shareable storage's layout: the host view, then the device view, each rounded up to pages.
std::size_t view_stride(std::size_t bytes) noexcept { return plugin::round_to_pages(bytes); }

} // namespace

HostStorage::HostStorage(std::shared_ptr<DeviceMemoryAccount> account, std::size_t bytes, unsigned char *host,
                         unsigned char *device) noexcept
    : account_(std::move(account)), bytes_(bytes), host_(host), device_(device) {}

void LiveViews::add(const std::shared_ptr<HostStorage> &storage) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const unsigned char *view : {storage->host_view(), storage->device_view()}) {
        const auto start = reinterpret_cast<std::uintptr_t>(view);
        ranges_[start] = Range{start + storage->size(), storage};
    }
}

void LiveViews::remove(const HostStorage &storage) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ranges_.erase(reinterpret_cast<std::uintptr_t>(storage.host_view()));
    ranges_.erase(reinterpret_cast<std::uintptr_t>(storage.device_view()));
}

std::shared_ptr<HostStorage> LiveViews::find(const void *p) const {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ranges_.upper_bound(address);
    if (it == ranges_.begin()) {
        return nullptr;
    }
    --it;
    return address < it->second.end ? it->second.storage.lock() : nullptr;
}

HostStorage::~HostStorage() {
    // Unlisted before the memory goes, so no new copy can find it once it is being freed.
    if (views_) {
        views_->remove(*this);
    }
    if (memfd_ >= 0) {
        ::munmap(host_, mapped_bytes_); // both views; other processes' mappings keep the memory
        ::close(memfd_);
    } else {
        std::free(host_);
        std::free(device_);
    }
    account_->release(bytes_);
}

xfer_status HostStorage::create(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                std::size_t bytes, std::shared_ptr<HostStorage> *out) {
    if (xfer_status st = reserve(*account, bytes, "buffer_alloc")) {
        return st;
    }
    Reservation reservation(*account, bytes);
    Block host;
    Block device;
    xfer_status st = allocate_view(bytes, "host view", &host);
    if (st != XFER_SUCCESS) {
        return st;
    }
    st = allocate_view(bytes, "emulated device view", &device);
    if (st != XFER_SUCCESS) {
        return st;
    }
    // Ownership moves in steps that each either fully succeed or throw with nothing moved:
    // `new` may throw while the blocks and the reservation are still held here; after that the
    // storage owns everything, and a throwing shared_ptr control block leaves it in `owner`.
    std::unique_ptr<HostStorage> owner(new HostStorage(account, bytes, host.get(), device.get()));
    host.release();
    device.release();
    reservation.keep();
    return publish(std::move(owner), std::move(views), out);
}

xfer_status HostStorage::publish(std::unique_ptr<HostStorage> owner, std::shared_ptr<LiveViews> views,
                                 std::shared_ptr<HostStorage> *out) {
    std::shared_ptr<HostStorage> storage(std::move(owner));
    storage->views_ = views;
    views->add(storage); // may throw bad_alloc: then the storage is released and unlisted
    *out = std::move(storage);
    return XFER_SUCCESS;
}

// Shareable: both views in one memfd, its size sealed (xfer_plugin/shared_memory.hpp).
xfer_status HostStorage::create_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                       std::size_t bytes, std::shared_ptr<HostStorage> *out) {
    plugin::OwnedFd fd;
    if (xfer_status st = plugin::make_sealed_memfd("xfer-host-buffer", 2 * view_stride(bytes),
                                                   "host buffer_alloc (shareable)", &fd)) {
        return st;
    }
    return map_shared(std::move(account), std::move(views), fd.release(), bytes, "buffer_alloc (shareable)", out);
}

xfer_status HostStorage::import_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                       int fd, std::size_t bytes, std::shared_ptr<HostStorage> *out) {
    const std::string kind = std::to_string(bytes) + "-byte host buffer";
    if (xfer_status st = plugin::check_sealed_memfd(fd, 2 * view_stride(bytes), kind.c_str(), "host buffer_import")) {
        return st;
    }
    plugin::OwnedFd kept; // the caller keeps its own
    if (xfer_status st = plugin::duplicate_fd(fd, "host buffer_import", &kept)) {
        return st;
    }
    return map_shared(std::move(account), std::move(views), kept.release(), bytes, "buffer_import", out);
}

xfer_status HostStorage::map_shared(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                    int fd, std::size_t bytes, const char *what, std::shared_ptr<HostStorage> *out) {
    plugin::OwnedFd owned(fd);
    if (xfer_status st = reserve(*account, bytes, what)) {
        return st;
    }
    Reservation reservation(*account, bytes);
    const std::size_t stride = view_stride(bytes);
    void *map = nullptr;
    if (xfer_status st = plugin::map_memfd(fd, 2 * stride, (std::string("host ") + what).c_str(), &map)) {
        return st;
    }
    auto *base = static_cast<unsigned char *>(map);
    std::unique_ptr<HostStorage> owner;
    try {
        owner.reset(new HostStorage(account, bytes, base, base + stride));
    } catch (...) {
        ::munmap(map, 2 * stride);
        throw;
    }
    owner->memfd_ = owned.release();
    owner->mapped_bytes_ = 2 * stride;
    reservation.keep();
    return publish(std::move(owner), std::move(views), out);
}

} // namespace xfer::host

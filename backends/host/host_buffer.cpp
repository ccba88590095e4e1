// SPDX-License-Identifier: Apache-2.0
#include "host_buffer.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include <xfer_plugin/errors.hpp>

namespace xfer::host {
namespace {
struct FreeDeleter {
    void operator()(unsigned char *p) const noexcept { std::free(p); }
};
using Block = std::unique_ptr<unsigned char, FreeDeleter>;

std::size_t page_size() noexcept {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

// Page alignment matches what the CUDA backends hand out, so user code tuned on host keeps
// its alignment assumptions on a GPU.
xfer_status allocate_view(std::size_t bytes, const char *which, Block *out) {
    void *p = nullptr;
    const int rc = posix_memalign(&p, page_size(), bytes);
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
    std::free(host_);
    std::free(device_);
    account_->release(bytes_);
}

xfer_status HostStorage::create(std::shared_ptr<DeviceMemoryAccount> account, std::shared_ptr<LiveViews> views,
                                std::size_t bytes, std::shared_ptr<HostStorage> *out) {
    if (!account->reserve(bytes)) {
        const auto capacity = account->capacity();
        const auto used = account->used();
        // Where the capacity came from, so the user knows which knob to turn.
        const char *source = account->capacity_from_param()
                                 ? "set by the device_memory parameter"
                                 : "half the physical RAM, as device_memory is 0: each buffer takes its size twice";
        return plugin::fail(XFER_ERROR_OUT_OF_MEMORY,
                            "host buffer_alloc: emulated device memory exhausted: %zu bytes requested, %llu of %llu "
                            "bytes free on this device, all its contexts together (capacity %s)",
                            bytes, static_cast<unsigned long long>(used > capacity ? 0 : capacity - used),
                            static_cast<unsigned long long>(capacity), source);
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
    std::shared_ptr<HostStorage> storage(std::move(owner));
    storage->views_ = views;
    views->add(storage); // may throw bad_alloc: then the storage is released and unlisted
    *out = std::move(storage);
    return XFER_SUCCESS;
}

} // namespace xfer::host

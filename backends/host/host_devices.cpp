// SPDX-License-Identifier: Apache-2.0
#include "host_devices.hpp"

#include <pthread.h>

#include <map>
#include <mutex>

#include "host_buffer.hpp"
#include "host_context.hpp"
#include <xfer_plugin/errors.hpp>

namespace xfer::host {
namespace {

struct Devices {
    std::mutex mutex;
    std::map<int, std::weak_ptr<DeviceMemoryAccount>> accounts; // by device index
    std::shared_ptr<LiveViews> views = std::make_shared<LiveViews>();
};

Devices &devices();

// fork(): both locks are held across it, so the child finds them unlocked whatever the
// parent's other threads were doing; the child starts with no device open (what the parent
// allocated is not the child's to count).
void lock_for_fork() {
    devices().mutex.lock();
    devices().views->lock_for_fork();
}
void unlock_in_parent() {
    devices().views->unlock_after_fork();
    devices().mutex.unlock();
}
void unlock_in_child() {
    devices().accounts.clear();
    unlock_in_parent();
}

// Constructed at first use and never destroyed: contexts closed from exit handlers or static
// destructors still find it.
Devices &devices() {
    static Devices *const all = [] {
        auto *d = new Devices;
        ::pthread_atfork(lock_for_fork, unlock_in_parent, unlock_in_child);
        return d;
    }();
    return *all;
}

} // namespace

xfer_status open_device_account(int device, std::uint64_t capacity, bool from_param,
                                std::shared_ptr<DeviceMemoryAccount> *out) {
    Devices &d = devices();
    std::lock_guard<std::mutex> lock(d.mutex);
    std::weak_ptr<DeviceMemoryAccount> &slot = d.accounts[device];
    if (std::shared_ptr<DeviceMemoryAccount> open = slot.lock()) {
        if (open->capacity() != capacity) {
            return plugin::fail(XFER_ERROR_CONFIG,
                                "host context_create: emulated device %d is open with a capacity of %llu bytes; a "
                                "context asking for %llu bytes (device_memory) cannot share it: give every context "
                                "of one device the same device_memory, or close the others first",
                                device, static_cast<unsigned long long>(open->capacity()),
                                static_cast<unsigned long long>(capacity));
        }
        *out = std::move(open);
        return XFER_SUCCESS;
    }
    auto account = std::make_shared<DeviceMemoryAccount>(capacity, from_param);
    slot = account;
    *out = std::move(account);
    return XFER_SUCCESS;
}

std::shared_ptr<LiveViews> process_views() { return devices().views; }

} // namespace xfer::host

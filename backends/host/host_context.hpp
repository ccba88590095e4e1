// SPDX-License-Identifier: Apache-2.0
// The host backend's context: the emulated device's capacity and what is allocated on it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "host_register.hpp"
#include "host_stream.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::host {

class LiveViews;

// Bytes of emulated device memory in use against a capacity. Shared (not owned) by every
// buffer's storage, because storage may outlive its buffer handle until queued copies finish.
class DeviceMemoryAccount {
  public:
    // from_param: the device_memory parameter set the capacity; false: half the physical RAM.
    DeviceMemoryAccount(std::uint64_t capacity, bool from_param) noexcept
        : capacity_(capacity), from_param_(from_param) {}

    // Takes `bytes` from the capacity; false (nothing taken) if they do not fit.
    bool reserve(std::uint64_t bytes) noexcept;
    void release(std::uint64_t bytes) noexcept;

    std::uint64_t capacity() const noexcept { return capacity_; }
    std::uint64_t used() const noexcept { return used_.load(); }
    bool capacity_from_param() const noexcept { return from_param_; }

  private:
    const std::uint64_t capacity_;
    const bool from_param_;
    std::atomic<std::uint64_t> used_{0};
};

// A host buffer is two host allocations of its size: the host view and the emulated device view.
constexpr std::uint64_t kViewsPerBuffer = 2;

struct HostContext {
    int device = 0;
    std::shared_ptr<DeviceMemoryAccount> account; // the emulated device's, shared by its contexts
    HostRegistry registered;                      // xfer_register bookkeeping
    std::shared_ptr<LiveViews> views;             // every live buffer's views (host_devices.hpp)
    HostStreams streams;                          // for xfer_unregister, which waits for them
};

// Physical RAM of the machine in bytes (sysconf), 0 if unknown.
std::uint64_t physical_memory_bytes() noexcept;
// RAM not in use right now in bytes (sysconf), 0 if unknown.
std::uint64_t available_memory_bytes() noexcept;

// The declared parameters (name, type, default, help), for the plugin table. Each default is
// written here once, as text; create_context and count_devices parse it like any other value
// (param_u64 of xfer_plugin/params.hpp).
extern const xfer_backend_param kParams[];
extern const std::size_t kParamCount;

// Builds a context from the effective parameters (already validated by the core; device_memory
// arrives as decimal bytes). Reports and returns a status on failure.
xfer_status create_context(int device, const xfer_backend_param_value *params, std::size_t param_count,
                           HostContext **out);

// The `devices` parameter (already validated as an int by the core; its declared default when
// absent): XFER_ERROR_CONFIG naming it and its value when it is below 1.
xfer_status count_devices(const xfer_backend_param_value *params, std::size_t param_count, int *device_count);

void fill_device_info(const HostContext &ctx, xfer_device_info *info) noexcept;

} // namespace xfer::host

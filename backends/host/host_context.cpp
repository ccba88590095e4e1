// SPDX-License-Identifier: Apache-2.0
#include "host_context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <thread>

#include "host_buffer.hpp"
#include "host_devices.hpp"
#include <xfer_plugin/params.hpp>

namespace xfer::host {

constexpr xfer_backend_param kParams[] = {
    {"device_memory", "size", "0",
     "capacity of the emulated device in bytes (0: half the physical RAM, as each buffer takes its size "
     "twice from RAM: host view and device view); allocations beyond it fail with XFER_ERROR_OUT_OF_MEMORY"},
    {"devices", "int", "1",
     "number of emulated devices (>= 1): device indexes 0 .. devices-1, each context on its own device memory; "
     "peer copies between them are memcpys"},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];
static_assert(plugin::declared_defaults_are_decimal(kParams), "param_u64 parses declared defaults as decimals");

bool DeviceMemoryAccount::reserve(std::uint64_t bytes) noexcept {
    std::uint64_t used = used_.load();
    do {
        // Written as a subtraction so that a huge request cannot overflow the sum.
        if (used > capacity_ || bytes > capacity_ - used) {
            return false;
        }
    } while (!used_.compare_exchange_weak(used, used + bytes));
    return true;
}

void DeviceMemoryAccount::release(std::uint64_t bytes) noexcept { used_.fetch_sub(bytes); }

namespace {
std::uint64_t pages_to_bytes(long pages) noexcept {
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) {
        return 0;
    }
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}
} // namespace

std::uint64_t physical_memory_bytes() noexcept { return pages_to_bytes(sysconf(_SC_PHYS_PAGES)); }

std::uint64_t available_memory_bytes() noexcept { return pages_to_bytes(sysconf(_SC_AVPHYS_PAGES)); }

xfer_status create_context(int device, const xfer_backend_param_value *params, std::size_t param_count,
                           HostContext **out) {
    std::uint64_t device_memory = 0;
    if (auto st = plugin::param_u64("host", kParams, kParamCount, params, param_count, "device_memory", 0,
                                    std::numeric_limits<std::uint64_t>::max(), &device_memory)) {
        return st;
    }
    const bool from_param = device_memory != 0;
    std::uint64_t capacity = device_memory;
    if (capacity == 0) {
        // "Unlimited" still means bounded by RAM: an emulated device larger than the machine
        // would only turn allocation failures into the OOM killer later. Every buffer costs
        // its size twice in RAM (host view + emulated device view), so the device gets half.
        capacity = physical_memory_bytes() / kViewsPerBuffer;
        if (capacity == 0) {
            capacity = std::numeric_limits<std::uint64_t>::max();
        }
    }
    auto ctx = std::make_unique<HostContext>();
    ctx->device = device;
    if (xfer_status st = open_device_account(device, capacity, from_param, &ctx->account)) {
        return st;
    }
    ctx->views = process_views();
    *out = ctx.release();
    return XFER_SUCCESS;
}

xfer_status count_devices(const xfer_backend_param_value *params, std::size_t param_count, int *device_count) {
    std::uint64_t devices = 0;
    if (auto st = plugin::param_u64("host", kParams, kParamCount, params, param_count, "devices", 1,
                                    static_cast<std::uint64_t>(std::numeric_limits<int>::max()), &devices)) {
        return st;
    }
    *device_count = static_cast<int>(devices);
    return XFER_SUCCESS;
}

void fill_device_info(const HostContext &ctx, xfer_device_info *info) noexcept {
    *info = xfer_device_info{};
    std::snprintf(info->name, sizeof info->name, "%s", "host (emulated device)");
    info->ordinal = ctx.device;
    info->kind = XFER_DEVICE_KIND_HOST;
    const std::uint64_t capacity = ctx.account->capacity();
    const std::uint64_t used = std::min(ctx.account->used(), capacity);
    info->total_memory = capacity;
    info->free_memory = capacity - used;
    if (!ctx.account->capacity_from_param()) {
        // Bounded by RAM: what other processes use is not free for us either, and a buffer
        // takes its size from RAM once per view.
        const std::uint64_t available = available_memory_bytes() / kViewsPerBuffer;
        if (available != 0) {
            info->free_memory = std::min(info->free_memory, available);
        }
    }
    const unsigned threads = std::thread::hardware_concurrency();
    info->multiprocessors = threads == 0 ? 1 : static_cast<int>(threads);
    // Each stream has its own worker thread, which plays the part of a copy engine.
    info->async_engine_count = 0;
    // Every "device" pointer is a host pointer, so XFER_COPY_DEFAULT can always infer the kind.
    info->unified_addressing = 1;
}

} // namespace xfer::host

// SPDX-License-Identifier: Apache-2.0
#include "host_context.hpp"

#include "host_buffer.hpp"

#include "host_errors.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

namespace xfer_host {

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

// Parses the decimal byte count the core hands over for a "size" parameter.
bool parse_bytes(const char *text, std::uint64_t *out) noexcept {
    if (text == nullptr || *text < '0' || *text > '9') {
        return false;
    }
    errno = 0;
    char *end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        return false;
    }
    *out = value;
    return true;
}
}  // namespace

std::uint64_t physical_memory_bytes() noexcept { return pages_to_bytes(sysconf(_SC_PHYS_PAGES)); }

std::uint64_t available_memory_bytes() noexcept { return pages_to_bytes(sysconf(_SC_AVPHYS_PAGES)); }

xfer_status create_context(int device, const xfer_backend_param_value *params, std::size_t param_count,
                           HostContext **out) {
    std::uint64_t device_memory = 0;
    for (std::size_t i = 0; i < param_count; ++i) {
        if (params[i].name == nullptr || std::strcmp(params[i].name, "device_memory") != 0) {
            continue;  // The core only passes declared parameters; nothing else to read.
        }
        if (!parse_bytes(params[i].value, &device_memory)) {
            report(XFER_ERROR_CONFIG, std::string("host: parameter device_memory: expected a byte count, got '") +
                                          (params[i].value ? params[i].value : "(null)") + "'");
            return XFER_ERROR_CONFIG;
        }
    }
    auto ctx = std::make_unique<HostContext>();
    ctx->device = device;
    ctx->capacity_from_param = device_memory != 0;
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
    ctx->account = std::make_shared<DeviceMemoryAccount>(capacity);
    ctx->views = std::make_shared<LiveViews>();
    *out = ctx.release();
    return XFER_SUCCESS;
}

xfer_status count_devices(const xfer_backend_param_value *params, std::size_t param_count, int *device_count) {
    for (std::size_t i = 0; i < param_count; ++i) {
        if (params[i].name == nullptr || std::strcmp(params[i].name, "devices") != 0) {
            continue;
        }
        const char *text = params[i].value != nullptr ? params[i].value : "(null)";
        char *end = nullptr;
        errno = 0;
        const long value = std::strtol(text, &end, 10);
        if (errno != 0 || end == text || *end != '\0' || value < 1 || value > std::numeric_limits<int>::max()) {
            report(XFER_ERROR_CONFIG, std::string("host: parameter devices (XFER_HOST_DEVICES, [host] devices): "
                                                  "expected a number of emulated devices >= 1, got '") +
                                          text + "'");
            return XFER_ERROR_CONFIG;
        }
        *device_count = static_cast<int>(value);
        return XFER_SUCCESS;
    }
    *device_count = 1;  // not passed: a core that predates the parameter
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
    if (!ctx.capacity_from_param) {
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

}  // namespace xfer_host

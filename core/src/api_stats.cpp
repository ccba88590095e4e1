// SPDX-License-Identifier: Apache-2.0
// Which path each copy took: the names of paths and reasons, what counts as slow, a context's
// statistics, its copy observer and its slow-path policy.
#include <cstddef>

#include "copy_paths.hpp"
#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

// In the order of xfer_copy_path / xfer_path_reason (checked below).
constexpr const char *kPathNames[] = {"unreported",       "host_memcpy",     "pinned_dma", "cached_registration",
                                      "new_registration", "driver_pageable", "staged",     "staged_sync",
                                      "packed",           "device_copy",     "peer",       "managed_migrate",
                                      "managed_staged",   "managed_copy",    "mapped"};
static_assert(sizeof kPathNames / sizeof kPathNames[0] == XFER_PATH_COUNT, "a name for every xfer_copy_path");

constexpr const char *kReasonNames[] = {"memory",     "below_crossover",     "no_faster_path", "first_use", "cache_hit",
                                        "cache_full", "registration_failed", "configured",     "split",     "one_off",
                                        "reuse",      "measured_fastest"};
static_assert(sizeof kReasonNames / sizeof kReasonNames[0] == XFER_REASON_COUNT, "a name for every xfer_path_reason");

} // namespace

extern "C" {

XFER_API const char *xfer_copy_path_name(xfer_copy_path path) {
    const auto i = static_cast<unsigned>(path);
    return i < XFER_PATH_COUNT ? kPathNames[i] : "unknown";
}

XFER_API const char *xfer_path_reason_name(xfer_path_reason reason) {
    const auto i = static_cast<unsigned>(reason);
    return i < XFER_REASON_COUNT ? kReasonNames[i] : "unknown";
}

XFER_API int xfer_path_is_slow(xfer_copy_path path, xfer_path_reason reason, uint64_t bytes) {
    const bool slow_kind = path == XFER_PATH_DRIVER_PAGEABLE || path == XFER_PATH_NEW_REGISTRATION;
    // The reasons that say the path is the fastest one measured for the copy.
    const bool measured = reason == XFER_REASON_BELOW_CROSSOVER || reason == XFER_REASON_ONE_OFF ||
                          reason == XFER_REASON_REUSE || reason == XFER_REASON_MEASURED_FASTEST;
    return slow_kind && bytes >= XFER_SLOW_PATH_MIN_BYTES && !measured ? 1 : 0;
}

XFER_API xfer_status xfer_context_get_stats(xfer_context ctx, xfer_context_stats *stats) {
    constexpr const char *fn = "xfer_context_get_stats";
    return guard(fn, [&] {
        Context &context = *lookup<Context>(ctx, fn, "ctx");
        if (stats == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": stats is NULL");
        if (stats->struct_size < offsetof(xfer_context_stats, calls)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": stats->struct_size is ", stats->struct_size,
                  " (set it to sizeof(xfer_context_stats), ", sizeof(xfer_context_stats), " in this xfer.h)");
        }
        context.stats.fill(stats);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_reset_stats(xfer_context ctx) {
    constexpr const char *fn = "xfer_context_reset_stats";
    return guard(fn, [&] {
        lookup<Context>(ctx, fn, "ctx")->stats.reset();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_set_copy_observer(xfer_context ctx, xfer_copy_observer_fn fn_, void *user_data) {
    constexpr const char *fn = "xfer_set_copy_observer";
    return guard(fn, [&] {
        lookup<Context>(ctx, fn, "ctx")->stats.set_observer(fn_, user_data);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_set_slow_path(xfer_context ctx, xfer_slow_path policy) {
    constexpr const char *fn = "xfer_context_set_slow_path";
    return guard(fn, [&] {
        Context &context = *lookup<Context>(ctx, fn, "ctx");
        if (policy < XFER_SLOW_PATH_ALLOW || policy > XFER_SLOW_PATH_REFUSE) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": policy ", static_cast<long long>(policy),
                  " is not an xfer_slow_path (0 = ALLOW, 1 = WARN, 2 = REFUSE)");
        }
        if (policy == XFER_SLOW_PATH_WARN) context.stats.ensure_log(); // where warnings go without an observer
        context.stats.slow_path.store(policy, std::memory_order_relaxed);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_get_slow_path(xfer_context ctx, xfer_slow_path *policy) {
    constexpr const char *fn = "xfer_context_get_slow_path";
    return guard(fn, [&] {
        Context &context = *lookup<Context>(ctx, fn, "ctx");
        if (policy == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": policy is NULL");
        *policy = static_cast<xfer_slow_path>(context.stats.slow_path.load(std::memory_order_relaxed));
        return XFER_SUCCESS;
    });
}

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
#include "batch.hpp"

namespace xfer::cuda {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

bool staged(Route r) noexcept { return r == Route::staged_to_device || r == Route::staged_to_host; }

} // namespace

Route route_for(Memory dst, Memory src, std::size_t bytes, const PackConfig &config) noexcept {
    if (config.max_entry == 0 || bytes > config.max_entry) {
        return Route::engine;
    }
    if (dst == Memory::device && src == Memory::pageable) {
        return Route::staged_to_device;
    }
    if (dst == Memory::device && src == Memory::pinned_host) {
        return config.mapped_host ? Route::mapped_to_device : Route::staged_to_device;
    }
    if (src == Memory::device && dst == Memory::pageable) {
        return Route::staged_to_host;
    }
    if (src == Memory::device && dst == Memory::pinned_host) {
        return config.mapped_host ? Route::mapped_to_host : Route::staged_to_host;
    }
    return Route::engine;
}

std::size_t descriptor_bytes(std::size_t count) noexcept {
    return round_up(count * sizeof(PackedEntry), kDescriptorAlignment);
}

BatchPlan plan_batch(const Route *routes, const std::size_t *sizes, std::size_t count, const PackConfig &config) {
    BatchPlan plan;
    constexpr Route packed[] = {Route::staged_to_device, Route::mapped_to_device, Route::staged_to_host,
                                Route::mapped_to_host};
    // Entries per route first: the lists are reserved once, and a route no entry takes costs
    // no pass (a plan runs on every batch call, over thousands of entries).
    std::size_t per_route[5] = {};
    for (std::size_t i = 0; i < count; ++i) {
        ++per_route[static_cast<std::size_t>(routes[i])];
    }
    plan.engine.reserve(per_route[static_cast<std::size_t>(Route::engine)]);
    // Sized once and written field by field: a push_back of each 16-byte Placement compiles to a
    // store-forwarding stall that would be most of the plan's time.
    plan.placed.resize(count - per_route[static_cast<std::size_t>(Route::engine)]);
    std::size_t placed = 0;
    if (per_route[static_cast<std::size_t>(Route::engine)] != 0) {
        for (std::size_t i = 0; i < count; ++i) {
            if (routes[i] == Route::engine) {
                plan.engine.push_back(i);
            }
        }
    }
    for (Route route : packed) {
        if (per_route[static_cast<std::size_t>(route)] == 0) {
            continue;
        }
        Group g;
        g.route = route;
        g.first = placed;
        std::size_t data = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (routes[i] != route) {
                continue;
            }
            const std::size_t bytes = staged(route) ? round_up(sizes[i], kPackAlignment) : 0;
            // Does entry i still fit beside the group's descriptors and data?
            if (g.count > 0 && descriptor_bytes(g.count + 1) + data + bytes > config.slot_bytes) {
                g.data_bytes = data;
                plan.groups.push_back(g);
                g.first = placed;
                g.count = 0;
                data = 0;
            }
            plan.placed[placed].index = i;
            plan.placed[placed].offset = data;
            ++placed;
            data += bytes;
            ++g.count;
        }
        if (g.count > 0) {
            g.data_bytes = data;
            plan.groups.push_back(g);
        }
    }
    return plan;
}

} // namespace xfer::cuda

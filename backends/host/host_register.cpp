// SPDX-License-Identifier: Apache-2.0
#include "host_register.hpp"

#include <cstdint>
#include <iterator>

#include <xfer_plugin/errors.hpp>
#include <xfer_plugin/paths.hpp>

namespace xfer::host {

xfer_status HostRegistry::add(void *ptr, std::size_t bytes) {
    const plugin::HostTimer timer;
    const auto start = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    // The first range starting at or after `start`, and the one before it, are the only ones
    // that can overlap.
    auto next = ranges_.lower_bound(start);
    const bool overlaps_next = next != ranges_.end() && next->first < start + bytes;
    const bool overlaps_prev = next != ranges_.begin() && std::prev(next)->first + std::prev(next)->second > start;
    if (overlaps_next || overlaps_prev) {
        return plugin::fail(XFER_ERROR_INVALID_STATE,
                            "host register_memory: [%ju, +%zu) overlaps a range already registered with this context",
                            static_cast<std::uintmax_t>(start), bytes);
    }
    ranges_.emplace(start, bytes);
    bytes_ += bytes;
    plugin::note_registration(false, bytes, timer.ns()); // nothing to lock: the bookkeeping is all
    return XFER_SUCCESS;
}

namespace {
xfer_status not_registered() {
    return plugin::fail(XFER_ERROR_INVALID_ARGUMENT,
                        "host unregister_memory: ptr is not the start of a range registered with this context");
}
} // namespace

xfer_status HostRegistry::check_start(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return ranges_.count(reinterpret_cast<std::uintptr_t>(ptr)) != 0 ? XFER_SUCCESS : not_registered();
}

xfer_status HostRegistry::remove(void *ptr) {
    const plugin::HostTimer timer;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ranges_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == ranges_.end()) {
        return not_registered();
    }
    const std::size_t bytes = it->second;
    bytes_ -= bytes;
    ranges_.erase(it);
    plugin::note_registration(true, bytes, timer.ns());
    return XFER_SUCCESS;
}

void HostRegistry::stats(xfer_registration_stats *out) {
    std::lock_guard<std::mutex> lock(mutex_);
    *out = xfer_registration_stats{};
    out->registered_ranges = ranges_.size();
    out->registered_bytes = bytes_;
}

} // namespace xfer::host

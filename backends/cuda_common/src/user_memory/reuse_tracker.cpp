// SPDX-License-Identifier: Apache-2.0
#include "reuse_tracker.hpp"

#include <iterator>

namespace xfer::cuda::user_memory {

void ReuseTracker::drop(std::map<std::uintptr_t, Range>::iterator it) noexcept {
    bytes_ -= it->second.bytes;
    lru_.erase(it->second.age);
    ranges_.erase(it);
}

ReuseTracker::Seen ReuseTracker::note(std::uintptr_t start, std::size_t bytes, std::uint64_t frame) {
    if (bytes > window_) return Seen{};
    auto it = ranges_.find(start);
    if (it != ranges_.end() && (it->second.bytes != bytes || it->second.frame != frame)) {
        drop(it); // another extent from the same start, or other memory there now: another range
        it = ranges_.end();
    }
    if (it == ranges_.end()) {
        // Another range overlapping this one goes: its memory is copied as part of something
        // else now, so its count says nothing of this range.
        forget(start, bytes);
        lru_.push_front(start);
        it = ranges_.emplace(start, Range{bytes, frame, 0, RangeState::unregistered, lru_.begin()}).first;
        bytes_ += bytes;
        while (bytes_ > window_ && !lru_.empty()) drop(ranges_.find(lru_.back()));
        it = ranges_.find(start);
    } else {
        lru_.splice(lru_.begin(), lru_, it->second.age);
    }
    Range &r = it->second;
    if (r.copies < ~0u) ++r.copies;
    return Seen{r.copies, r.state};
}

void ReuseTracker::mark(std::uintptr_t start, std::size_t bytes, RangeState state) noexcept {
    auto it = ranges_.find(start);
    if (it != ranges_.end() && it->second.bytes == bytes) it->second.state = state;
}

void ReuseTracker::forget(std::uintptr_t start, std::size_t bytes) noexcept {
    if (ranges_.empty()) return;
    // Ranges never overlap one another, so at most one starts before `start` and reaches it.
    auto it = ranges_.upper_bound(start);
    if (it != ranges_.begin()) {
        auto before = std::prev(it);
        if (before->first + before->second.bytes > start) drop(before);
    }
    while (it != ranges_.end() && it->first < start + bytes) drop(it++);
}

} // namespace xfer::cuda::user_memory

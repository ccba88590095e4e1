// SPDX-License-Identifier: Apache-2.0
// The ranges of user memory copied lately and how often each was copied: what tells a one-off
// copy from a range the program copies again (a training step's inputs). Ranges are whole pages
// and are told apart by their extent (a copy of part of an array is another range) and by the
// physical frame of their first page: memory freed and mapped again at the same address (a
// fresh array each step) is another range, not a reuse. The window is
// a byte budget, least recently copied first out: a range is forgotten once `window_bytes` of
// other ranges were copied since it was last seen. Not thread-safe: the registration cache holds
// its lock around every call. No CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>

namespace xfer::cuda::user_memory {

// What became of a range's registration, as far as the tracker remembers.
enum class RangeState : std::uint8_t {
    unregistered = 0,
    pending = 1, // a registration in the background was asked for
    refused = 2, // the driver refused to page-lock it (RLIMIT_MEMLOCK, a file mapping, ...): not again
};

class ReuseTracker {
  public:
    explicit ReuseTracker(std::size_t window_bytes) noexcept : window_(window_bytes) {}

    struct Seen {
        unsigned copies = 1; // this copy included
        RangeState state = RangeState::unregistered;
    };
    // Counts a copy of the range [start, start + bytes) (page-aligned) whose first page is the
    // physical frame `frame` (0: unknown) and says how often it was copied within the window,
    // this copy included. A range larger than the window is never remembered (every copy of it
    // is its first).
    Seen note(std::uintptr_t start, std::size_t bytes, std::uint64_t frame = 0);
    // Marks a remembered range (nothing when it is not remembered).
    void mark(std::uintptr_t start, std::size_t bytes, RangeState state) noexcept;
    // Forgets every range overlapping [start, start + bytes): registered by xfer_register,
    // page-locked by the cache, or released.
    void forget(std::uintptr_t start, std::size_t bytes) noexcept;

    std::size_t bytes() const noexcept { return bytes_; }
    std::size_t size() const noexcept { return ranges_.size(); }
    std::size_t window() const noexcept { return window_; }

  private:
    struct Range {
        std::size_t bytes = 0;
        std::uint64_t frame = 0;
        unsigned copies = 0;
        RangeState state = RangeState::unregistered;
        std::list<std::uintptr_t>::iterator age; // position in lru_
    };
    void drop(std::map<std::uintptr_t, Range>::iterator it) noexcept;

    std::size_t window_;
    std::size_t bytes_ = 0;
    std::map<std::uintptr_t, Range> ranges_; // by start (ordered: overlaps are found by a lookup)
    std::list<std::uintptr_t> lru_;          // starts, most recently copied first
};

} // namespace xfer::cuda::user_memory

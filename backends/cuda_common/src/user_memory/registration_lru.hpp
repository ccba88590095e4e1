// SPDX-License-Identifier: Apache-2.0
// The bookkeeping of a context's registration cache, apart from CUDA so that it is
// unit-tested without a device: cached page ranges, least-recently-used order, the byte limit,
// and the identity of each range's pages (page_frames.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace xfer::cuda::user_memory {

struct CachedRange {
    std::uintptr_t start = 0;          // page-aligned
    std::size_t bytes = 0;             // whole pages
    std::vector<std::uint64_t> frames; // physical frame of each page when it was registered
    std::uint64_t last_use = 0;        // tick of the LRU clock
    std::uint64_t register_ns = 0;     // host time cudaHostRegister took
};

// Not thread-safe: the cache holds its lock around every call.
class RegistrationLru {
  public:
    explicit RegistrationLru(std::size_t limit) noexcept : limit_(limit) {}

    // The cached range that covers [start, start + bytes) whole, or nullptr.
    CachedRange *find(std::uintptr_t start, std::size_t bytes) noexcept;
    // Marks `r` most recently used.
    void touch(CachedRange &r) noexcept { r.last_use = ++clock_; }
    // Starts of the cached ranges that overlap [start, start + bytes).
    std::vector<std::uintptr_t> overlapping(std::uintptr_t start, std::size_t bytes) const;
    // Starts of the ranges to evict, least recently used first, so that `bytes` more fit under
    // the limit. False (and nothing in *out) when `bytes` alone exceeds the limit.
    bool victims_for(std::size_t bytes, std::vector<std::uintptr_t> *out) const;

    void insert(CachedRange r);             // r must not overlap a cached range
    CachedRange take(std::uintptr_t start); // removes and returns the range starting at `start`
    std::vector<std::uintptr_t> all() const;

    std::size_t bytes() const noexcept { return bytes_; }
    std::size_t size() const noexcept { return ranges_.size(); }
    std::size_t limit() const noexcept { return limit_; }

  private:
    std::map<std::uintptr_t, CachedRange> ranges_;
    std::size_t bytes_ = 0;
    std::uint64_t clock_ = 0;
    std::size_t limit_;
};

} // namespace xfer::cuda::user_memory

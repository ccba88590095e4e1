// SPDX-License-Identifier: Apache-2.0
// The ranges a raw copy may name (xfer.h): no larger than any object (PTRDIFF_MAX), not
// wrapping around the end of the address space, and not overlapping each other. Checked here,
// once, for every backend and every raw copy (single, batched, peer), before anything is queued.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xfer::core {

inline constexpr std::size_t kMaxObject = static_cast<std::size_t>(PTRDIFF_MAX);

inline bool wraps(const void *p, std::size_t bytes) {
    return reinterpret_cast<std::uintptr_t>(p) > UINTPTR_MAX - bytes;
}

// The common case, inline (the hot path of a small copy): both ranges are possible objects...
inline bool ranges_possible(const void *dst, const void *src, std::size_t bytes) {
    return bytes <= kMaxObject && !wraps(dst, bytes) && !wraps(src, bytes);
}

// ...and disjoint. Overlapping ranges are refused rather than moved as memmove would: cudaMemcpy
// and memcpy leave them undefined, and on every backend with unified addressing (all of xfer's)
// two intersecting address ranges are the same memory. Only meaningful for possible ranges.
inline bool ranges_disjoint(const void *dst, const void *src, std::size_t bytes) {
    const auto d = reinterpret_cast<std::uintptr_t>(dst);
    const auto s = reinterpret_cast<std::uintptr_t>(src);
    return d + bytes <= s || s + bytes <= d;
}

// Throw what is wrong with ranges the checks above refused: XFER_ERROR_INVALID_SIZE for an
// impossible size or range, XFER_ERROR_INVALID_ARGUMENT for overlapping ranges. `index` < 0
// for a single copy, else the batch entry named in the message.
[[noreturn]] void raise_impossible_ranges(const char *function, long long index, const void *dst, const void *src,
                                          std::size_t bytes);
[[noreturn]] void raise_overlapping_ranges(const char *function, long long index, const void *dst, const void *src,
                                           std::size_t bytes);

// Both checks, in that order.
inline void check_ranges(const char *function, long long index, const void *dst, const void *src, std::size_t bytes) {
    if (!ranges_possible(dst, src, bytes)) raise_impossible_ranges(function, index, dst, src, bytes);
    if (!ranges_disjoint(dst, src, bytes)) raise_overlapping_ranges(function, index, dst, src, bytes);
}

} // namespace xfer::core

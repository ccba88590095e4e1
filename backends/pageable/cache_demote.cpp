// SPDX-License-Identifier: Apache-2.0
#include "cache_demote.hpp"

#include <cstdint>

// cldemote through its intrinsic where the compiler knows the instruction (GCC 9, clang 7 on);
// elsewhere, and off x86-64, the function does nothing.
#if defined(__x86_64__) && (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 9))
#define XFER_HAVE_CLDEMOTE 1
#include <immintrin.h>
#endif

namespace xfer::cuda::pageable {

#if defined(XFER_HAVE_CLDEMOTE)
namespace {
constexpr std::uintptr_t kCacheLine = 64;
} // namespace

// The target attribute lets the compiler emit cldemote without -mcldemote for the whole file:
// the instruction sits in the multi-byte NOP space, so older CPUs run it as a no-op.
__attribute__((target("cldemote"))) void demote_from_core_caches(const void *p, std::size_t bytes) noexcept {
    if (bytes == 0) {
        return;
    }
    // From the line holding the first byte to the one holding the last, whatever p's alignment.
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) & ~(kCacheLine - 1);
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + bytes;
    for (std::uintptr_t line = first; line < end; line += kCacheLine) {
        _cldemote(reinterpret_cast<void *>(line));
    }
}
#else
void demote_from_core_caches(const void *, std::size_t) noexcept {}
#endif

} // namespace xfer::cuda::pageable

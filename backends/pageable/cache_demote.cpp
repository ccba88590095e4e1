// SPDX-License-Identifier: Apache-2.0
#include "cache_demote.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xfer::cuda::pageable {

namespace {
constexpr std::size_t kCacheLine = 64;
} // namespace

#if defined(__x86_64__)
// The target attribute lets the compiler emit cldemote without -mcldemote for the whole file:
// the instruction sits in the multi-byte NOP space, so older CPUs run it as a no-op.
__attribute__((target("cldemote"))) void demote_from_core_caches(const void *p, std::size_t bytes) noexcept {
    const char *line = static_cast<const char *>(p);
    for (std::size_t i = 0; i < bytes; i += kCacheLine) {
        _cldemote(const_cast<char *>(line + i));
    }
}
#else
void demote_from_core_caches(const void *, std::size_t) noexcept {}
#endif

} // namespace xfer::cuda::pageable

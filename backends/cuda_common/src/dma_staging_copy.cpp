// SPDX-License-Identifier: Apache-2.0
#include "dma_staging_copy.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xfer::cuda {

#if defined(__x86_64__)
namespace {

constexpr std::size_t kLine = 64;
// Below this a copy is a few lines: memcpy's cached stores cost nothing worth avoiding.
constexpr std::size_t kMinStreamingBytes = 4 * kLine;

// 16-byte streaming stores (SSE2, every x86-64 CPU): a memory-bound copy gains nothing from
// wider ones, and no CPU dispatch is needed.
void stream_lines(unsigned char *dst, const unsigned char *src, std::size_t lines) noexcept {
    for (std::size_t i = 0; i < lines; ++i, dst += kLine, src += kLine) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 32));
        const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(dst + 48), d);
    }
}

} // namespace

void dma_staging_copy(void *dst, const void *src, std::size_t bytes) noexcept {
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    if (bytes < kMinStreamingBytes) {
        std::memcpy(d, s, bytes);
        return;
    }
    // Up to the first whole destination line with memcpy, whole lines streamed, the rest memcpy.
    const std::size_t head = (kLine - reinterpret_cast<std::uintptr_t>(d) % kLine) % kLine;
    std::memcpy(d, s, head);
    const std::size_t lines = (bytes - head) / kLine;
    stream_lines(d + head, s + head, lines);
    const std::size_t done = head + lines * kLine;
    std::memcpy(d + done, s + done, bytes - done);
}

void dma_staging_fence() noexcept { _mm_sfence(); }

#else

} // namespace xfer::cuda
#include <atomic>
namespace xfer::cuda {

void dma_staging_copy(void *dst, const void *src, std::size_t bytes) noexcept { std::memcpy(dst, src, bytes); }

void dma_staging_fence() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }

#endif

} // namespace xfer::cuda

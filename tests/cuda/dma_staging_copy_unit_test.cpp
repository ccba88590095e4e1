// SPDX-License-Identifier: Apache-2.0
// dma_staging_copy (cuda_common/src/dma_staging_copy.hpp): every byte copied, none outside the
// destination touched, for sizes around its memcpy threshold and cache-line edges and for every
// alignment of source and destination within a line. No device needed.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dma_staging_copy.hpp"

namespace {

using xfer::cuda::dma_staging_copy;
using xfer::cuda::dma_staging_fence;

constexpr std::size_t kGuard = 128;
constexpr unsigned char kUntouched = 0xee;

std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = static_cast<unsigned char>((i * 131 + seed * 17 + (i >> 8)) & 0xff);
    }
    return v;
}

TEST(DmaStagingCopy, CopiesEveryByteAndNothingElseAtEveryAlignment) {
    const std::size_t sizes[] = {0, 1, 63, 64, 65, 255, 256, 257, 1000, 4096, 4096 + 13, (1u << 20) + 7};
    for (std::size_t bytes : sizes) {
        for (std::size_t dst_off : {0, 1, 15, 16, 33, 63}) {
            for (std::size_t src_off : {0, 3, 16, 48}) {
                SCOPED_TRACE(testing::Message() << bytes << " bytes, dst +" << dst_off << ", src +" << src_off);
                const auto src = pattern(bytes + src_off + 64, static_cast<unsigned>(bytes + dst_off));
                std::vector<unsigned char> dst(bytes + dst_off + 2 * kGuard + 64, kUntouched);
                // The destination starts dst_off bytes into a 64-byte line.
                auto base = reinterpret_cast<std::uintptr_t>(dst.data() + kGuard);
                const std::size_t to_line = (64 - base % 64) % 64;
                unsigned char *d = dst.data() + kGuard + to_line + dst_off;
                dma_staging_copy(d, src.data() + src_off, bytes);
                dma_staging_fence();
                ASSERT_TRUE(std::equal(d, d + bytes, src.data() + src_off));
                for (unsigned char *p = dst.data(); p < d; ++p) {
                    ASSERT_EQ(kUntouched, *p) << "a byte before the destination, at -" << (d - p);
                }
                for (unsigned char *p = d + bytes; p < dst.data() + dst.size(); ++p) {
                    ASSERT_EQ(kUntouched, *p) << "a byte after the destination, at +" << (p - d - bytes);
                }
            }
        }
    }
}

// The fence makes a thread's streamed bytes visible to a thread that sees its later release.
TEST(DmaStagingCopy, BytesAreVisibleToAnotherThreadAfterTheFence) {
    const std::size_t n = 8u << 20;
    const auto src = pattern(n, 7);
    std::vector<unsigned char> dst(n, 0);
    std::atomic<bool> ready{false};
    std::thread writer([&] {
        dma_staging_copy(dst.data(), src.data(), n);
        dma_staging_fence();
        ready.store(true, std::memory_order_release);
    });
    while (!ready.load(std::memory_order_acquire)) {
        std::this_thread::yield();
    }
    EXPECT_TRUE(dst == src);
    writer.join();
}

} // namespace

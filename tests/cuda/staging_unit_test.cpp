// SPDX-License-Identifier: Apache-2.0
// Unit tests of the pageable staging engine's arithmetic: workers and slots chosen from the
// machine, chunks that cover every copy. No device needed.
#include <gtest/gtest.h>

#include "staging_plan.hpp"

namespace {

using namespace xfer::cuda::pageable;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// Chunks of `unit` cover [0, bytes) in order, without gaps or overlap.
void expect_cover(std::size_t bytes, std::size_t unit) {
    const std::size_t n = chunk_count(bytes, unit);
    std::size_t expected_offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Span s = nth_chunk(bytes, unit, i);
        EXPECT_EQ(expected_offset, s.offset) << "chunk " << i << " of " << bytes << " by " << unit;
        EXPECT_GT(s.bytes, 0u) << "chunk " << i << " of " << bytes << " by " << unit;
        EXPECT_LE(s.bytes, unit);
        if (i + 1 < n) {
            EXPECT_EQ(unit, s.bytes) << "only the last chunk may be short";
        }
        expected_offset += s.bytes;
    }
    EXPECT_EQ(bytes, expected_offset) << bytes << " by " << unit;
}

TEST(StagingPlan, AutoThreadsFollowTheMachineUpToSixteen) {
    EXPECT_EQ(1u, auto_threads(0)) << "an unknown thread count still gets one worker";
    EXPECT_EQ(1u, auto_threads(1));
    EXPECT_EQ(2u, auto_threads(2));
    EXPECT_EQ(16u, auto_threads(16));
    EXPECT_EQ(kMaxAutoThreads, auto_threads(256));
}

TEST(StagingPlan, AutoSlotsAreTwicePerWorker) {
    EXPECT_EQ(2u, auto_slots(0));
    EXPECT_EQ(2u, auto_slots(1));
    EXPECT_EQ(32u, auto_slots(16));
}

TEST(StagingPlan, ChunksGiveEveryWorkerWorkButNeverExceedASlot) {
    // A 1 GiB copy with 16 workers and 4 MiB slots: slot-sized chunks.
    EXPECT_EQ(4 * MiB, plan_chunk(1024 * MiB, 16, 4 * MiB));
    // 8 MiB with 16 workers: 512 KiB each, so all 16 work.
    EXPECT_EQ(512 * KiB, plan_chunk(8 * MiB, 16, 4 * MiB));
    // Mid sizes: two chunks per worker (the DMA of the first overlaps the copy of the second),
    // down to 1 MiB chunks.
    EXPECT_EQ(2 * MiB, plan_chunk(64 * MiB, 16, 4 * MiB));
    EXPECT_EQ(1 * MiB, plan_chunk(32 * MiB, 16, 4 * MiB));
    EXPECT_EQ(1 * MiB, plan_chunk(16 * MiB, 16, 4 * MiB));
    EXPECT_EQ(4 * MiB, plan_chunk(128 * MiB, 16, 4 * MiB));
    // Small copies: never below 256 KiB, never above the slot.
    EXPECT_EQ(kMinChunkBytes, plan_chunk(1 * MiB, 16, 4 * MiB));
    EXPECT_EQ(64 * KiB, plan_chunk(1 * MiB, 16, 64 * KiB));
    EXPECT_EQ(1u, chunk_count(100, plan_chunk(100, 8, 4 * MiB)));
    // Whole pages.
    EXPECT_EQ(0u, plan_chunk(3 * MiB + 17, 2, 4 * MiB) % 4096);
}

TEST(StagingPlan, ChunksCoverEveryCopy) {
    const std::size_t sizes[] = {1, 4095, 4096, 700 * KiB + 3, MiB, 3 * MiB + 17, 64 * MiB};
    const std::size_t slots[] = {4096, 700 * KiB, MiB, 4 * MiB};
    for (std::size_t slot : slots) {
        for (std::size_t bytes : sizes) {
            for (std::size_t threads : {1, 3, 16}) {
                const std::size_t chunk = plan_chunk(bytes, threads, slot);
                EXPECT_LE(chunk, slot);
                expect_cover(bytes, chunk);
            }
        }
    }
}

TEST(StagingPlan, ChunksOfNothingAndOfARemainder) {
    EXPECT_EQ(0u, chunk_count(0, MiB));
    EXPECT_EQ(0u, chunk_count(5, 0));
    EXPECT_EQ(3u, chunk_count(2 * MiB + 1, MiB));
    EXPECT_EQ(1u, nth_chunk(2 * MiB + 1, MiB, 2).bytes);
    EXPECT_EQ(0u, nth_chunk(2 * MiB + 1, MiB, 3).bytes);
}

} // namespace

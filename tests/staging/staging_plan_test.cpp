// SPDX-License-Identifier: Apache-2.0
// Unit tests of the pageable staging engine's arithmetic: workers and slots chosen from the
// machine, chunks and pieces that cover every copy. No device needed.
#include <vector>

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

TEST(StagingPlan, AutoThreadsLeaveOneHardwareThreadUpToSixteen) {
    EXPECT_EQ(1u, auto_threads(0)) << "an unknown thread count still gets one worker";
    EXPECT_EQ(1u, auto_threads(1));
    EXPECT_EQ(2u, auto_threads(2)) << "a two-thread machine keeps both";
    EXPECT_EQ(2u, auto_threads(3));
    EXPECT_EQ(15u, auto_threads(16));
    EXPECT_EQ(16u, auto_threads(17));
    EXPECT_EQ(kMaxAutoThreads, auto_threads(256));
}

TEST(StagingPlan, AutoSlotsAreOnePerWorkerAtLeastFour) {
    EXPECT_EQ(kMinAutoSlots, auto_slots(0));
    EXPECT_EQ(4u, auto_slots(1));
    EXPECT_EQ(16u, auto_slots(16));
}

TEST(StagingPlan, ChunksPiecesAndSlots) {
    // About kTargetChunks chunks, whole pages, at least kMinDmaChunkBytes, at most the slot.
    EXPECT_EQ(8 * MiB, plan_chunk(1024 * MiB, 8 * MiB));
    EXPECT_EQ(0u, plan_chunk(64 * MiB, 8 * MiB) % 4096);
    EXPECT_LE(chunk_count(64 * MiB, plan_chunk(64 * MiB, 8 * MiB)), kTargetChunks);
    EXPECT_EQ(kMinDmaChunkBytes, plan_chunk(1 * MiB, 8 * MiB));
    EXPECT_EQ(64 * KiB, plan_chunk(1 * MiB, 64 * KiB));
    EXPECT_EQ(1u, chunk_count(100, plan_chunk(100, 8 * MiB)));
    // Pieces: the chunk shared out among the workers, at least kMinPieceBytes.
    EXPECT_EQ(512 * KiB, plan_piece(8 * MiB, 16));
    EXPECT_EQ(kMinPieceBytes, plan_piece(1 * MiB, 16));
    EXPECT_EQ(8 * MiB, plan_piece(8 * MiB, 1));
    // Slots: one per chunk, at most kMaxSlotsPerCopy and half the arena, at least one.
    EXPECT_EQ(kMaxSlotsPerCopy, plan_slots(128, 8 * MiB, granules_of(128 * MiB)));
    EXPECT_EQ(4u, plan_slots(128, 8 * MiB, granules_of(64 * MiB)));
    EXPECT_EQ(3u, plan_slots(3, 8 * MiB, granules_of(128 * MiB)));
    EXPECT_EQ(1u, plan_slots(10, 8 * MiB, granules_of(8 * MiB)));
    EXPECT_EQ(1u, granules_of(1));
    EXPECT_EQ(2u, granules_of(kArenaGranuleBytes + 1));
}

TEST(StagingPlan, ChunksCoverEveryCopy) {
    const std::size_t sizes[] = {1, 4095, 4096, 700 * KiB + 3, MiB, 3 * MiB + 17, 64 * MiB};
    const std::size_t slots[] = {4096, 700 * KiB, MiB, 8 * MiB};
    for (std::size_t slot : slots) {
        for (std::size_t bytes : sizes) {
            const std::size_t chunk = plan_chunk(bytes, slot);
            EXPECT_LE(chunk, slot);
            expect_cover(bytes, chunk);
            for (std::size_t threads : {1, 3, 16}) {
                expect_cover(chunk, plan_piece(chunk, threads));
            }
        }
    }
}

TEST(StagingPlan, LayoutsHaveShortEdgesAndCoverEveryCopy) {
    // 64 MiB in 8 MiB chunks: a 1 MiB head, seven whole chunks, a tail of 4, 2 and 1 MiB.
    const ChunkLayout l = plan_layout(64 * MiB, 8 * MiB);
    EXPECT_EQ(8 * MiB, l.chunk);
    EXPECT_EQ(8 * MiB / kEdgeDivisor, l.edge);
    EXPECT_EQ(1 * MiB, l.edge);
    EXPECT_EQ(0u, l.remainder);
    EXPECT_EQ(11u, l.count);
    const std::size_t expected[] = {1, 8, 8, 8, 8, 8, 8, 8, 4, 2, 1};
    for (std::size_t i = 0; i < l.count; ++i) {
        EXPECT_EQ(expected[i] * MiB, l.span(i).bytes) << "chunk " << i;
    }
    EXPECT_EQ(64 * MiB - 1 * MiB, l.span(10).offset);
    // 100 MiB: what no whole chunk fills (4 MiB) comes right after the head, not at the end.
    const ChunkLayout r = plan_layout(100 * MiB, 8 * MiB);
    EXPECT_EQ(4 * MiB, r.remainder);
    EXPECT_EQ(4 * MiB, r.span(1).bytes);
    EXPECT_EQ(1 * MiB, r.span(1).offset);
    EXPECT_EQ(8 * MiB, r.span(2).bytes);
    EXPECT_EQ(1 * MiB, r.span(r.count - 1).bytes);
    // 64 MiB + 1 byte: the byte ends the last chunk; every chunk starts on a page.
    const ChunkLayout odd = plan_layout(64 * MiB + 1, 8 * MiB);
    EXPECT_EQ(0u, odd.remainder);
    EXPECT_EQ(11u, odd.count);
    EXPECT_EQ(1 * MiB + 1, odd.span(10).bytes);
    for (std::size_t i = 0; i < odd.count; ++i) {
        EXPECT_EQ(0u, odd.span(i).offset % 4096) << "chunk " << i;
    }
    // 100 MiB + 4097: the whole page goes after the head, the odd byte to the end.
    const ChunkLayout r2 = plan_layout(100 * MiB + 4097, 8 * MiB);
    EXPECT_EQ(4 * MiB + 4096, r2.remainder);
    EXPECT_EQ(1 * MiB + 1, r2.span(r2.count - 1).bytes);
    // Too small for a halving tail and a whole chunk (12 KiB chunks, a tail of 8 + 4 KiB): one
    // edge at each end.
    const ChunkLayout small = plan_layout(26000, 12288);
    EXPECT_EQ(12288u, small.chunk);
    EXPECT_EQ(1u, small.tail_count);
    EXPECT_EQ(4096u, small.span(small.count - 1).bytes - 26000 % 4096);
    // Below two chunks: equal chunks, no edges.
    EXPECT_EQ(0u, plan_layout(700 * KiB, 8 * MiB).edge);
    const std::size_t sizes[] = {1,
                                 10,
                                 4095,
                                 24576,
                                 26000,
                                 28671,
                                 45000,
                                 700 * KiB + 3,
                                 MiB,
                                 3 * MiB + 17,
                                 16 * MiB + 1,
                                 64 * MiB,
                                 64 * MiB + 1,
                                 100 * MiB + 13,
                                 100 * MiB + 4097,
                                 1024 * MiB + 5};
    EXPECT_EQ(0u, plan_layout(10, 2).edge) << "chunks too small for an edge have none";
    for (std::size_t max_chunk : {std::size_t{2}, std::size_t{4096}, std::size_t{5000}, std::size_t{8192},
                                  std::size_t{12288}, std::size_t{20480}, 700 * KiB, 8 * MiB}) {
        for (std::size_t bytes : sizes) {
            if (bytes / max_chunk > 100000) {
                continue; // the tiny chunk over large copies: millions of chunks, nothing new
            }
            const ChunkLayout layout = plan_layout(bytes, max_chunk);
            std::size_t expected_offset = 0;
            for (std::size_t i = 0; i < layout.count; ++i) {
                const Span s = layout.span(i);
                EXPECT_EQ(expected_offset, s.offset) << "chunk " << i << " of " << bytes << " by " << max_chunk;
                EXPECT_GT(s.bytes, 0u) << "chunk " << i << " of " << bytes << " by " << max_chunk;
                EXPECT_LE(s.bytes, layout.chunk) << "a chunk must fit a slot";
                if (layout.edge != 0 && max_chunk % 4096 == 0 && i + 1 < layout.count) {
                    EXPECT_EQ(0u, s.bytes % 4096) << "chunk " << i << " of " << bytes << " by " << max_chunk
                                                  << ": only the last may end off a page";
                }
                expected_offset += s.bytes;
            }
            EXPECT_EQ(bytes, expected_offset) << bytes << " by " << max_chunk;
        }
    }
}

TEST(StagingPlan, ChunksReadRightAfterTheirFillAreDemoted) {
    // 64 MiB in 8 MiB chunks: the 1 MiB head and the 4, 2, 1 MiB tail, not the whole chunks.
    auto demoted = [](const ChunkLayout &l) {
        std::vector<bool> out;
        for (std::size_t i = 0; i < l.count; ++i) out.push_back(plan_demotes(l.span(i).bytes, l.chunk));
        return out;
    };
    const std::vector<bool> edges = {true, false, false, false, false, false, false, false, true, true, true};
    EXPECT_EQ(edges, demoted(plan_layout(64 * MiB, 8 * MiB)));
    // 16 MiB: 2 MiB chunks; again only the head and the tail (1 MiB, 512 and 256 KiB).
    const ChunkLayout mid = plan_layout(16 * MiB, 8 * MiB);
    ASSERT_EQ(2 * MiB, mid.chunk);
    const std::vector<bool> mid_edges = {true, false, false, false, false, false, false, false, true, true, true};
    EXPECT_EQ(mid_edges, demoted(mid));
    // 100 MiB: the 4 MiB remainder after the head too.
    const ChunkLayout r = plan_layout(100 * MiB, 8 * MiB);
    ASSERT_EQ(4 * MiB, r.span(1).bytes);
    EXPECT_TRUE(plan_demotes(r.span(1).bytes, r.chunk));
    EXPECT_FALSE(plan_demotes(r.span(2).bytes, r.chunk));
    // Below two chunks (no edges): equal chunks, none demoted but a shorter last one.
    const ChunkLayout small = plan_layout(700 * KiB, 8 * MiB);
    ASSERT_EQ(2u, small.count);
    EXPECT_FALSE(plan_demotes(small.span(0).bytes, small.chunk));
    EXPECT_TRUE(plan_demotes(small.span(1).bytes, small.chunk));
}

TEST(StagingPlan, ChunksOfNothingAndOfARemainder) {
    EXPECT_EQ(0u, chunk_count(0, MiB));
    EXPECT_EQ(0u, chunk_count(5, 0));
    EXPECT_EQ(3u, chunk_count(2 * MiB + 1, MiB));
    EXPECT_EQ(1u, nth_chunk(2 * MiB + 1, MiB, 2).bytes);
    EXPECT_EQ(0u, nth_chunk(2 * MiB + 1, MiB, 3).bytes);
}

} // namespace

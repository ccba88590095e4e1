// Unit tests of the pageable staged path's host side: chunk planning, slot bookkeeping and
// the host copy threads. No device needed.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "xfer_cuda/chunk_plan.hpp"
#include "xfer_cuda/host_copy_pool.hpp"
#include "xfer_cuda/slot_queue.hpp"

namespace {

using namespace xfer::cuda;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

// Spans of `unit` cover [0, bytes) in order, without gaps or overlap.
void expect_cover(std::size_t bytes, std::size_t unit) {
    const std::size_t n = span_count(bytes, unit);
    std::size_t expected_offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Span s = nth_span(bytes, unit, i);
        EXPECT_EQ(expected_offset, s.offset) << "span " << i << " of " << bytes << " by " << unit;
        EXPECT_GT(s.bytes, 0u) << "span " << i << " of " << bytes << " by " << unit;
        EXPECT_LE(s.bytes, unit);
        if (i + 1 < n) {
            EXPECT_EQ(unit, s.bytes) << "only the last span may be short";
        }
        expected_offset += s.bytes;
    }
    EXPECT_EQ(bytes, expected_offset) << bytes << " by " << unit;
}

TEST(StagingPlan, StagesOnlyCopiesOfAtLeastOneMiBWithThreads) {
    EXPECT_EQ(1 * MiB, k_min_staged_bytes);
    EXPECT_FALSE(should_stage(1, 8));
    EXPECT_FALSE(should_stage(MiB - 1, 8));
    EXPECT_TRUE(should_stage(MiB, 8));
    EXPECT_TRUE(should_stage(MiB, 1));
    EXPECT_TRUE(should_stage(256 * MiB, 8));
    EXPECT_FALSE(should_stage(256 * MiB, 0)) << "staging_threads 0 turns staging off";
}

TEST(StagingPlan, BigCopiesUseTheConfiguredChunk) {
    EXPECT_EQ(8 * MiB, plan_chunk_bytes(64 * MiB, 8 * MiB));
    EXPECT_EQ(8 * MiB, plan_chunk_bytes(16 * MiB, 8 * MiB));
    EXPECT_EQ(8 * MiB, plan_chunk_bytes(3 * 8 * MiB + 17, 8 * MiB));
    EXPECT_EQ(4u, span_count(3 * 8 * MiB + 17, plan_chunk_bytes(3 * 8 * MiB + 17, 8 * MiB)));
    EXPECT_EQ(17u, nth_span(3 * 8 * MiB + 17, 8 * MiB, 3).bytes);
}

TEST(StagingPlan, CopiesBelowTwoChunksAreHalvedSoTheyStillOverlap) {
    EXPECT_EQ(512 * KiB, plan_chunk_bytes(MiB, 8 * MiB));
    EXPECT_EQ(4 * MiB, plan_chunk_bytes(8 * MiB, 8 * MiB));
    EXPECT_EQ(4 * MiB, plan_chunk_bytes(8 * MiB - 1, 8 * MiB));
    // Halves are page-rounded: 1 MiB + 1 -> 516 KiB + 4 KiB.
    EXPECT_EQ(512 * KiB + 4096, plan_chunk_bytes(MiB + 1, 8 * MiB));
    EXPECT_EQ(8 * MiB, plan_chunk_bytes(16 * MiB - 1, 8 * MiB)) << "never above the slot size";
    for (std::size_t bytes : {MiB, MiB + 1, 3 * MiB + 17, 8 * MiB - 1, 8 * MiB, 16 * MiB - 1}) {
        const std::size_t chunk = plan_chunk_bytes(bytes, 8 * MiB);
        EXPECT_EQ(2u, span_count(bytes, chunk)) << bytes;
        EXPECT_EQ(0u, chunk % k_chunk_alignment) << bytes;
    }
}

TEST(StagingPlan, ChunksCoverEveryCopyAndFitTheSlot) {
    const std::size_t chunk_sizes[] = {4096, 64 * KiB, MiB, 8 * MiB, 8 * MiB + 4096};
    const std::size_t sizes[] = {MiB, MiB + 1, 2 * MiB - 1, 3 * MiB + 17, 8 * MiB - 1, 8 * MiB, 24 * MiB + 17,
                                 64 * MiB, 256 * MiB + 4095};
    for (std::size_t chunk_size : chunk_sizes) {
        for (std::size_t bytes : sizes) {
            const std::size_t chunk = plan_chunk_bytes(bytes, chunk_size);
            ASSERT_GT(chunk, 0u);
            EXPECT_LE(chunk, chunk_size) << bytes << " with chunk_size " << chunk_size;
            EXPECT_GE(span_count(bytes, chunk), 2u) << "a staged copy always has two chunks to overlap";
            expect_cover(bytes, chunk);
        }
    }
}

TEST(StagingPlan, PiecesGiveEachThreadEnoughWork) {
    EXPECT_EQ(MiB, plan_piece_bytes(8 * MiB, 8));
    EXPECT_EQ(8 * MiB, plan_piece_bytes(8 * MiB, 1));
    EXPECT_EQ(256 * KiB, plan_piece_bytes(MiB, 8)) << "1 MiB: 4 pieces of the 256 KiB minimum, not 8";
    EXPECT_EQ(300 * KiB, plan_piece_bytes(300 * KiB, 8)) << "below two minimum pieces: one piece";
    EXPECT_EQ(64u, plan_piece_bytes(17, 8)) << "cache-line rounded";
    EXPECT_GT(plan_piece_bytes(0, 8), 0u) << "never 0";
    const std::size_t sizes[] = {1, 63, 64, 256 * KiB, 512 * KiB + 1, MiB, 8 * MiB + 1, 64 * MiB - 3};
    for (std::size_t threads : {1u, 2u, 3u, 8u, 256u}) {
        for (std::size_t bytes : sizes) {
            const std::size_t piece = plan_piece_bytes(bytes, threads);
            EXPECT_EQ(0u, piece % k_piece_alignment) << bytes << " on " << threads;
            EXPECT_LE(span_count(bytes, piece), threads) << bytes << " on " << threads;
            if (span_count(bytes, piece) > 1) {
                EXPECT_GE(piece, k_min_piece_bytes) << bytes << " on " << threads;
            }
            expect_cover(bytes, piece);
        }
    }
}

TEST(StagingPlan, SpansOfNothingAndOfARemainder) {
    EXPECT_EQ(0u, span_count(0, 4096));
    EXPECT_EQ(3u, span_count(10, 4));
    EXPECT_EQ(8u, nth_span(10, 4, 2).offset);
    EXPECT_EQ(2u, nth_span(10, 4, 2).bytes);
}

TEST(StagingSlots, HandsOutEachSlotOnceAndRefusesWhenAllAreTaken) {
    SlotQueue q;
    std::vector<std::size_t> taken;
    for (std::size_t i = 0; i < SlotQueue::k_slots; ++i) {
        taken.push_back(q.acquire());
    }
    std::sort(taken.begin(), taken.end());
    for (std::size_t i = 0; i < SlotQueue::k_slots; ++i) {
        EXPECT_EQ(i, taken[i]);
    }
    std::size_t slot = 99;
    EXPECT_FALSE(q.try_acquire(&slot));
    EXPECT_EQ(99u, slot) << "output written when nothing was free";
    q.release(2);
    ASSERT_TRUE(q.try_acquire(&slot));
    EXPECT_EQ(2u, slot);
}

TEST(StagingSlots, HandsOutTheSlotReleasedLongestAgo) {
    SlotQueue q;
    for (std::size_t i = 0; i < SlotQueue::k_slots; ++i) {
        (void)q.acquire();
    }
    q.release(3);
    q.release(1);
    q.release(2);
    EXPECT_EQ(3u, q.acquire());
    EXPECT_EQ(1u, q.acquire());
    std::size_t slot = 0;
    ASSERT_TRUE(q.try_acquire(&slot));
    EXPECT_EQ(2u, slot);
}

TEST(StagingSlots, AcquireWaitsForARelease) {
    SlotQueue q;
    for (std::size_t i = 0; i < SlotQueue::k_slots; ++i) {
        (void)q.acquire();
    }
    auto waiter = std::async(std::launch::async, [&] { return q.acquire(); });
    // Not a timing assertion: no slot is free, so the waiter cannot have one yet.
    EXPECT_EQ(std::future_status::timeout, waiter.wait_for(std::chrono::milliseconds(50)));
    q.release(1);
    EXPECT_EQ(1u, waiter.get());
}

TEST(StagingSlots, LeaseGivesTheSlotBackAtScopeExit) {
    SlotQueue q;
    for (std::size_t i = 0; i + 1 < SlotQueue::k_slots; ++i) {
        (void)q.acquire();
    }
    std::size_t last = 0;
    {
        SlotLease lease(q, q.acquire());
        last = lease.slot();
        SlotLease moved = std::move(lease);
        EXPECT_FALSE(static_cast<bool>(lease));
        std::size_t slot = 0;
        EXPECT_FALSE(q.try_acquire(&slot));
    }
    std::size_t slot = 99;
    ASSERT_TRUE(q.try_acquire(&slot));
    EXPECT_EQ(last, slot);
}

TEST(StagingSlots, NoSlotIsEverHeldByTwoThreads) {
    SlotQueue q;
    std::array<std::atomic<int>, SlotQueue::k_slots> holders{};
    std::atomic<int> violations{0};
    std::atomic<long> handed_out{0};
    auto worker = [&](unsigned seed) {
        for (int round = 0; round < 2000; ++round) {
            // Like a D2H copy: one slot by blocking, more only if free right now.
            std::vector<SlotLease> held;
            held.emplace_back(q, q.acquire());
            std::size_t extra = 0;
            if ((round + seed) % 3 == 0 && q.try_acquire(&extra)) {
                held.emplace_back(q, extra);
            }
            for (const auto &l : held) {
                if (holders[l.slot()].fetch_add(1) != 0) {
                    ++violations;
                }
                ++handed_out;
            }
            std::this_thread::yield();
            for (const auto &l : held) {
                holders[l.slot()].fetch_sub(1);
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 8; ++t) {
        threads.emplace_back(worker, t);
    }
    for (auto &t : threads) {
        t.join();
    }
    EXPECT_EQ(0, violations.load());
    EXPECT_GE(handed_out.load(), 8 * 2000);
    std::size_t slot = 0;
    for (std::size_t i = 0; i < SlotQueue::k_slots; ++i) {
        EXPECT_TRUE(q.try_acquire(&slot)) << "a slot was lost";
    }
}

TEST(StagingHostCopy, CopiesEveryByteWithAnyThreadCount) {
    const std::uint64_t seed = xfer_test::fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t sizes[] = {1, 63, 256 * KiB + 1, MiB, 3 * MiB + 17};
    for (std::size_t threads : {0u, 1u, 2u, 8u}) {
        HostCopyPool pool(threads);
        EXPECT_EQ(threads == 0 ? 1u : threads, pool.threads());
        for (std::size_t bytes : sizes) {
            // Odd offsets: pageable memory is whatever the application passes.
            const auto src = xfer_test::random_bytes(bytes + 3, seed + bytes);
            std::vector<unsigned char> dst(bytes + 5, 0);
            pool.copy(dst.data() + 5, src.data() + 3, bytes);
            EXPECT_TRUE(std::equal(src.begin() + 3, src.end(), dst.begin() + 5)) << bytes << " bytes, " << threads;
            EXPECT_EQ(0, dst[0] | dst[1] | dst[2] | dst[3] | dst[4]) << "wrote before the destination";
        }
    }
}

TEST(StagingHostCopy, CallersOnSeveralThreadsShareThePool) {
    const std::uint64_t seed = xfer_test::fresh_seed();
    SCOPED_TRACE(seed);
    HostCopyPool pool(4);
    const std::size_t bytes = 2 * MiB + 123;
    std::vector<std::vector<unsigned char>> sources;
    std::vector<std::vector<unsigned char>> targets;
    for (unsigned t = 0; t < 4; ++t) {
        sources.push_back(xfer_test::random_bytes(bytes, seed + t));
        targets.emplace_back(bytes, 0);
    }
    std::vector<std::thread> callers;
    for (unsigned t = 0; t < 4; ++t) {
        callers.emplace_back([&, t] {
            for (int round = 0; round < 10; ++round) {
                pool.copy(targets[t].data(), sources[t].data(), bytes);
            }
        });
    }
    for (auto &c : callers) {
        c.join();
    }
    for (unsigned t = 0; t < 4; ++t) {
        EXPECT_TRUE(sources[t] == targets[t]) << "caller " << t;
    }
}

}  // namespace

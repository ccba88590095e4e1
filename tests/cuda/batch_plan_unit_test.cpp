// SPDX-License-Identifier: Apache-2.0
// The CUDA-free parts of batched copies: packing plans and registration in pieces with rollback.
// No device needed (cuda_unit).
#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "batch.hpp"        // private to cuda_common
#include "registration.hpp" // private to cuda_common

namespace xfer::cuda {
namespace {

PackConfig config(std::size_t max_entry, std::size_t slot, bool mapped) {
    PackConfig c;
    c.max_entry = max_entry;
    c.slot_bytes = slot;
    c.mapped_host = mapped;
    return c;
}

TEST(BatchPlan, RoutesFollowMemoriesAndThreshold) {
    const PackConfig c = config(32768, 1 << 20, true);
    EXPECT_EQ(Route::staged_to_device, route_for(Memory::device, Memory::pageable, 4096, c));
    EXPECT_EQ(Route::mapped_to_device, route_for(Memory::device, Memory::pinned_host, 4096, c));
    EXPECT_EQ(Route::staged_to_host, route_for(Memory::pageable, Memory::device, 32768, c));
    EXPECT_EQ(Route::mapped_to_host, route_for(Memory::pinned_host, Memory::device, 1, c));
    EXPECT_EQ(Route::engine, route_for(Memory::device, Memory::pageable, 32769, c)); // above the threshold
    EXPECT_EQ(Route::engine, route_for(Memory::device, Memory::device, 64, c));
    EXPECT_EQ(Route::engine, route_for(Memory::managed, Memory::pageable, 64, c));
    EXPECT_EQ(Route::engine, route_for(Memory::pageable, Memory::pageable, 64, c));
    // Without same-address mapping, page-locked memory is staged like pageable memory.
    EXPECT_EQ(Route::staged_to_device,
              route_for(Memory::device, Memory::pinned_host, 64, config(32768, 1 << 20, false)));
    // Packing off.
    EXPECT_EQ(Route::engine, route_for(Memory::device, Memory::pageable, 1, config(0, 1 << 20, true)));
}

TEST(BatchPlan, EveryPackedEntryPlacedOnceAlignedWithoutOverlapInsideItsSlot) {
    const std::size_t count = 5000;
    std::vector<std::size_t> sizes(count);
    std::vector<Route> routes(count);
    for (std::size_t i = 0; i < count; ++i) {
        sizes[i] = 1 + (i * 7919) % 20000;
        routes[i] = i % 7 == 0 ? Route::engine : i % 2 ? Route::staged_to_device : Route::staged_to_host;
    }
    const PackConfig c = config(20000, 1 << 20, false);
    const BatchPlan plan = plan_batch(routes.data(), sizes.data(), count, c);
    std::set<std::size_t> seen(plan.engine.begin(), plan.engine.end());
    for (std::size_t i : plan.engine) EXPECT_EQ(Route::engine, routes[i]);
    for (const Group &g : plan.groups) {
        ASSERT_GT(g.count, 0u);
        EXPECT_LE(descriptor_bytes(g.count) + g.data_bytes, c.slot_bytes);
        std::size_t end = 0;
        for (std::size_t k = g.first; k < g.first + g.count; ++k) {
            const Placement &p = plan.placed[k];
            EXPECT_EQ(g.route, routes[p.index]);
            EXPECT_EQ(0u, p.offset % kPackAlignment);
            EXPECT_GE(p.offset, end); // after the previous entry of the group: no overlap
            end = p.offset + sizes[p.index];
            EXPECT_LE(end, g.data_bytes);
            EXPECT_TRUE(seen.insert(p.index).second) << "entry " << p.index << " placed twice";
        }
    }
    EXPECT_EQ(count, seen.size());
    EXPECT_GT(plan.groups.size(), 2u); // 1 MiB slots cannot hold ~40 MiB in two groups
}

TEST(BatchPlan, MappedEntriesTakeNoDataAndFillASlotWithDescriptorsOnly) {
    const std::size_t count = 4096;
    std::vector<std::size_t> sizes(count, 4096);
    std::vector<Route> routes(count, Route::mapped_to_device);
    const BatchPlan plan = plan_batch(routes.data(), sizes.data(), count, config(32768, 8 << 20, true));
    ASSERT_EQ(1u, plan.groups.size());
    EXPECT_EQ(0u, plan.groups[0].data_bytes);
    EXPECT_EQ(count, plan.groups[0].count);
    EXPECT_TRUE(plan.engine.empty());
}

TEST(BatchPlan, FourThousandPagesFitThreeEightMiBSlots) {
    const std::size_t count = 4096;
    std::vector<std::size_t> sizes(count, 4096);
    std::vector<Route> routes(count, Route::staged_to_device);
    const BatchPlan plan = plan_batch(routes.data(), sizes.data(), count, config(32768, 8 << 20, false));
    ASSERT_EQ(3u, plan.groups.size());
    EXPECT_EQ(count, plan.groups[0].count + plan.groups[1].count + plan.groups[2].count);
}

// ----------------------------------------------------------------- registration in pieces

struct FakeDriver {
    std::size_t fail_whole_above = SIZE_MAX; // a single call larger than this fails
    int fail_piece = -1;                     // the n-th piece call fails (0-based), -1 never
    int piece_calls = 0;
    std::vector<Piece> registered;
};

xfer_status fake_register(void *user, char *start, std::size_t bytes) {
    auto *d = static_cast<FakeDriver *>(user);
    if (bytes > d->fail_whole_above) return XFER_ERROR_OUT_OF_MEMORY;
    if (d->piece_calls++ == d->fail_piece) return XFER_ERROR_BACKEND;
    d->registered.push_back(Piece{start, bytes});
    return XFER_SUCCESS;
}

void fake_unregister(void *user, char *start, std::size_t) {
    auto *d = static_cast<FakeDriver *>(user);
    for (auto it = d->registered.begin(); it != d->registered.end(); ++it) {
        if (it->start == start) {
            d->registered.erase(it);
            return;
        }
    }
    ADD_FAILURE() << "unregistered a piece that was not registered";
}

TEST(RegisterPieces, WholeRangeInOneCallWhenTheDriverTakesIt) {
    FakeDriver d;
    std::vector<Piece> pieces;
    char *base = reinterpret_cast<char *>(std::uintptr_t{1} << 30);
    ASSERT_EQ(XFER_SUCCESS, register_in_pieces(base, 5000, 1024, fake_register, fake_unregister, &d, &pieces));
    ASSERT_EQ(1u, pieces.size());
    EXPECT_EQ(5000u, pieces[0].bytes);
}

TEST(RegisterPieces, LargeRangeFallsBackToPiecesThatCoverItExactly) {
    FakeDriver d;
    d.fail_whole_above = 1024;
    std::vector<Piece> pieces;
    char *base = reinterpret_cast<char *>(std::uintptr_t{1} << 30);
    ASSERT_EQ(XFER_SUCCESS, register_in_pieces(base, 5000, 1024, fake_register, fake_unregister, &d, &pieces));
    ASSERT_EQ(5u, pieces.size());
    std::size_t at = 0;
    for (const Piece &p : pieces) {
        EXPECT_EQ(base + at, p.start);
        at += p.bytes;
    }
    EXPECT_EQ(5000u, at);
    EXPECT_EQ(904u, pieces.back().bytes);
}

TEST(RegisterPieces, FailedPieceRollsBackEveryEarlierPiece) {
    FakeDriver d;
    d.fail_whole_above = 1024;
    d.fail_piece = 3; // the whole call failed before counting; pieces 0, 1, 2 succeed, 3 fails
    std::vector<Piece> pieces;
    char *base = reinterpret_cast<char *>(std::uintptr_t{1} << 30);
    EXPECT_EQ(XFER_ERROR_BACKEND, register_in_pieces(base, 5000, 1024, fake_register, fake_unregister, &d, &pieces));
    EXPECT_TRUE(d.registered.empty());
    EXPECT_TRUE(pieces.empty()); // output written only on success
}

TEST(RegisterPieces, SmallRangeThatFailsIsNotCutUp) {
    FakeDriver d;
    d.fail_whole_above = 10;
    std::vector<Piece> pieces;
    char *base = reinterpret_cast<char *>(std::uintptr_t{1} << 30);
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY,
              register_in_pieces(base, 1000, 1024, fake_register, fake_unregister, &d, &pieces));
    EXPECT_EQ(0, d.piece_calls);
}

} // namespace
} // namespace xfer::cuda

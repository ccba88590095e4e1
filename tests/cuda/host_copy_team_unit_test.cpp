// SPDX-License-Identifier: Apache-2.0
// HostCopyTeam (cuda_common/src/host_copy_team.hpp): a packed group's gather and scatter shared
// in blocks among the owner and helper threads. Every piece lands where its slot offset says and
// nothing else is written, whatever the number of helpers (none, fewer than the blocks, more),
// over several copies of one team (a batch's groups), with helpers that join late (the pool's
// threads busy when the team is made), helpers asleep between copies, and a team released before
// its helpers start. No device.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <gtest/gtest.h>

#include "host_copy_team.hpp"

namespace {

using xfer::cuda::HostCopyTeam;
using xfer::cuda::HostPiece;

constexpr unsigned char kUntouched = 0xee;

// `count` pieces of random sizes (1 byte to 20 KiB) at scattered places of `user`, packed one
// after another (16-byte aligned) into a slot, as a batch plan places them.
struct Scatter {
    std::vector<unsigned char> user;
    std::vector<HostPiece> pieces;
    std::size_t slot_bytes = 0;
};

Scatter make_scatter(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> size(1, 20 << 10);
    std::uniform_int_distribution<std::size_t> gap(0, 4096);
    // The pieces' places in the user's memory, in address order...
    std::vector<std::pair<std::size_t, std::size_t>> places; // offset, bytes
    std::size_t user_end = 0;
    for (std::size_t k = 0; k < count; ++k) {
        const std::size_t bytes = size(rng);
        user_end += gap(rng);
        places.emplace_back(user_end, bytes);
        user_end += bytes;
    }
    // ...taken in a random order, as a scattered batch has them, and packed one after another
    // (16-byte aligned) into the slot.
    std::shuffle(places.begin(), places.end(), rng);
    Scatter s;
    s.user.assign(user_end, kUntouched);
    for (const auto &[offset, bytes] : places) {
        s.pieces.push_back(HostPiece{s.user.data() + offset, s.slot_bytes, bytes});
        s.slot_bytes += (bytes + 15) / 16 * 16;
    }
    return s;
}

unsigned char byte_for(std::size_t piece, std::size_t i, unsigned round) {
    return static_cast<unsigned char>((piece * 7 + i * 13 + round * 29) % 251);
}

// Gathers the pieces' user bytes into a slot, then scatters a different pattern back, and
// checks both, for `rounds` copies of each kind on the same team.
void round_trip(HostCopyTeam &team, Scatter &s, unsigned rounds) {
    for (unsigned round = 0; round < rounds; ++round) {
        SCOPED_TRACE(testing::Message() << "round " << round << ", " << team.helpers() << " helpers");
        for (std::size_t k = 0; k < s.pieces.size(); ++k) {
            for (std::size_t i = 0; i < s.pieces[k].bytes; ++i) s.pieces[k].user[i] = byte_for(k, i, round);
        }
        std::vector<unsigned char> slot(s.slot_bytes + 64, kUntouched);
        team.copy(s.pieces.data(), s.pieces.size(), slot.data(), true);
        // Each piece at its slot offset; the alignment padding and the slot's tail untouched.
        std::vector<unsigned char> expected_slot(slot.size(), kUntouched);
        for (std::size_t k = 0; k < s.pieces.size(); ++k) {
            const HostPiece &p = s.pieces[k];
            for (std::size_t i = 0; i < p.bytes; ++i) expected_slot[p.slot_offset + i] = byte_for(k, i, round);
        }
        ASSERT_TRUE(slot == expected_slot) << "gather: a byte differs (or padding was written)";
        for (std::size_t k = 0; k < s.pieces.size(); ++k) {
            const HostPiece &p = s.pieces[k];
            for (std::size_t i = 0; i < p.bytes; ++i) slot[p.slot_offset + i] = byte_for(k, i, round + 100);
        }
        const std::vector<unsigned char> before = s.user;
        team.copy(s.pieces.data(), s.pieces.size(), slot.data(), false);
        std::vector<unsigned char> expected = before;
        for (std::size_t k = 0; k < s.pieces.size(); ++k) {
            const HostPiece &p = s.pieces[k];
            const std::size_t at = static_cast<std::size_t>(p.user - s.user.data());
            for (std::size_t i = 0; i < p.bytes; ++i) expected[at + i] = byte_for(k, i, round + 100);
        }
        ASSERT_TRUE(s.user == expected) << "scatter: a byte differs (or one outside the pieces was written)";
    }
}

TEST(HostCopyTeam, EveryPieceLandsWithAnyNumberOfHelpers) {
    boost::asio::thread_pool pool(7);
    for (std::size_t helpers : {0u, 1u, 3u, 7u, 12u}) {
        Scatter s = make_scatter(400, static_cast<unsigned>(helpers) + 1);
        ASSERT_GT(s.slot_bytes, 16 * HostCopyTeam::kBlockBytes) << "the copies have more blocks than helpers";
        HostCopyTeam team(&pool, helpers);
        EXPECT_EQ(helpers, team.helpers());
        round_trip(team, s, 2);
    }
    pool.join();
}

TEST(HostCopyTeam, WithoutAPoolTheOwnerCopiesAlone) {
    Scatter s = make_scatter(100, 7);
    HostCopyTeam team(nullptr, 4);
    EXPECT_EQ(0u, team.helpers());
    round_trip(team, s, 2);
}

TEST(HostCopyTeam, EmptyAndOnePieceCopies) {
    boost::asio::thread_pool pool(2);
    {
        HostCopyTeam team(&pool, 2);
        unsigned char slot[32] = {};
        team.copy(nullptr, 0, slot, true); // nothing to do, returns
        unsigned char src[5] = {1, 2, 3, 4, 5};
        const HostPiece one{src, 16, sizeof src};
        team.copy(&one, 1, slot, true);
        EXPECT_TRUE(std::equal(src, src + 5, slot + 16));
        EXPECT_EQ(0, slot[15]);
        EXPECT_EQ(0, slot[21]);
    }
    pool.join(); // the team's helpers returned once it was released
}

// The pool's threads are all busy when the team is made: its helpers start only after the owner
// has copied alone for a while (a late wake-up), and must still leave every byte right.
TEST(HostCopyTeam, HelpersThatJoinLateTakeWhatIsLeft) {
    boost::asio::thread_pool pool(3);
    std::atomic<bool> go{false};
    for (int i = 0; i < 3; ++i) {
        boost::asio::post(pool, [&go] {
            while (!go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
        });
    }
    Scatter s = make_scatter(400, 11);
    {
        HostCopyTeam team(&pool, 3);
        std::thread release([&go] {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            go = true;
        });
        round_trip(team, s, 3);
        release.join();
    }
    pool.join();
}

// The owner pauses longer than the helpers spin between copies (as a batch whose slot is still in
// use): the helpers sleep, the next copy wakes them, and every byte still lands.
TEST(HostCopyTeam, HelpersAsleepBetweenCopiesWakeForTheNext) {
    boost::asio::thread_pool pool(3);
    Scatter s = make_scatter(300, 5);
    {
        HostCopyTeam team(&pool, 3);
        for (int round = 0; round < 3; ++round) {
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
            round_trip(team, s, 1);
        }
    }
    pool.join(); // every helper returned once the team was released, asleep or not
}

// Teams made and released at once, before any of their helpers could start: the helpers find
// them released and return; the pool drains.
TEST(HostCopyTeam, ATeamReleasedBeforeItsHelpersStartLetsThemGo) {
    boost::asio::thread_pool pool(2);
    for (int i = 0; i < 200; ++i) {
        HostCopyTeam team(&pool, 2);
    }
    pool.join(); // returns only once every helper has returned
    SUCCEED();
}

} // namespace

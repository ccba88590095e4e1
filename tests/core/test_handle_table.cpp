// SPDX-License-Identifier: Apache-2.0
// The handle table: generations, kinds, garbage values, concurrent use.
#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "handle_table.hpp"

using namespace xfer::core;

namespace {

struct Thing {
    int value;
};

TEST(HandleTable, InsertThenLookupReturnsTheObject) {
    HandleTable<Thing> table(HandleKind::buffer);
    std::uint64_t a = table.insert(std::make_shared<Thing>(Thing{1}));
    std::uint64_t b = table.insert(std::make_shared<Thing>(Thing{2}));
    ASSERT_NE(a, 0u);
    ASSERT_NE(b, 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(table.lookup(a)->value, 1);
    EXPECT_EQ(table.lookup(b)->value, 2);
    EXPECT_EQ(table.size(), 2u);
    EXPECT_EQ(decode_handle(a).kind, HandleKind::buffer);
}

TEST(HandleTable, FreedHandleStaysInvalidAfterSlotReuse) {
    HandleTable<Thing> table(HandleKind::stream);
    std::uint64_t old_handle = table.insert(std::make_shared<Thing>(Thing{1}));
    ASSERT_TRUE(table.take(old_handle));
    std::uint64_t new_handle = table.insert(std::make_shared<Thing>(Thing{2}));
    // Same slot, next generation.
    EXPECT_EQ(decode_handle(new_handle).index, decode_handle(old_handle).index);
    EXPECT_EQ(decode_handle(new_handle).generation, decode_handle(old_handle).generation + 1);
    LookupError why = LookupError::none;
    EXPECT_FALSE(table.lookup(old_handle, &why));
    EXPECT_EQ(why, LookupError::stale);
    EXPECT_EQ(table.lookup(new_handle)->value, 2);
    EXPECT_FALSE(table.take(old_handle, &why)); // must not free the new occupant
    EXPECT_EQ(why, LookupError::stale);
    EXPECT_EQ(table.lookup(new_handle)->value, 2);
}

TEST(HandleTable, SecondTakeFails) {
    HandleTable<Thing> table(HandleKind::event);
    std::uint64_t h = table.insert(std::make_shared<Thing>(Thing{5}));
    auto first = table.take(h);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->value, 5);
    LookupError why = LookupError::none;
    EXPECT_FALSE(table.take(h, &why));
    EXPECT_EQ(why, LookupError::stale);
    EXPECT_EQ(table.size(), 0u);
}

TEST(HandleTable, WrongKindIsDetected) {
    HandleTable<Thing> buffers(HandleKind::buffer);
    HandleTable<Thing> streams(HandleKind::stream);
    std::uint64_t b = buffers.insert(std::make_shared<Thing>(Thing{1}));
    LookupError why = LookupError::none;
    EXPECT_FALSE(streams.lookup(b, &why));
    EXPECT_EQ(why, LookupError::wrong_kind);
    EXPECT_FALSE(streams.take(b, &why));
    EXPECT_EQ(buffers.lookup(b)->value, 1);
}

TEST(HandleTable, NullAndGarbageValuesAreRejectedWithoutCrashing) {
    HandleTable<Thing> table(HandleKind::context);
    table.insert(std::make_shared<Thing>(Thing{1}));
    LookupError why = LookupError::none;
    EXPECT_FALSE(table.lookup(0, &why));
    EXPECT_EQ(why, LookupError::null_handle);
    int on_stack = 0;
    for (std::uint64_t garbage : {std::uint64_t(0x1234), std::uint64_t(~0ull), std::uint64_t(0xdeadbeef),
                                  std::uint64_t(reinterpret_cast<std::uintptr_t>(&on_stack))}) {
        EXPECT_FALSE(table.lookup(garbage, &why)) << std::hex << garbage;
        EXPECT_EQ(why, LookupError::not_a_handle) << std::hex << garbage;
    }
    // Well-formed but never issued: slot out of range, or generation not reached yet.
    EXPECT_FALSE(table.lookup(encode_handle(HandleKind::context, 1, 999), &why));
    EXPECT_EQ(why, LookupError::stale);
    EXPECT_FALSE(table.lookup(encode_handle(HandleKind::context, 7, 0), &why));
    EXPECT_EQ(why, LookupError::stale);
    // Generation 0 is never issued.
    EXPECT_FALSE(table.lookup(encode_handle(HandleKind::context, 0, 0), &why));
    EXPECT_EQ(why, LookupError::not_a_handle);
}

TEST(HandleTable, RandomValuesNeverMatchALiveHandleOfAnotherTable) {
    HandleTable<Thing> table(HandleKind::buffer);
    std::set<std::uint64_t> live;
    for (int i = 0; i < 64; ++i) live.insert(table.insert(std::make_shared<Thing>(Thing{i})));
    std::mt19937_64 gen(12345);
    for (int i = 0; i < 100000; ++i) {
        std::uint64_t v = gen();
        if (live.count(v) != 0) continue;
        EXPECT_FALSE(table.lookup(v)) << std::hex << v;
    }
}

TEST(HandleTable, LookedUpObjectOutlivesConcurrentTake) {
    HandleTable<Thing> table(HandleKind::buffer);
    std::uint64_t h = table.insert(std::make_shared<Thing>(Thing{42}));
    auto held = table.lookup(h);
    ASSERT_TRUE(table.take(h));
    EXPECT_EQ(held->value, 42); // still alive through the shared_ptr
    EXPECT_EQ(held.use_count(), 1);
}

TEST(HandleTable, ConcurrentInsertTakeLookupKeepsCountsExact) {
    HandleTable<Thing> table(HandleKind::stream);
    constexpr int kThreads = 8;
    constexpr int kRounds = 2000;
    std::atomic<int> taken{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::uint64_t> mine;
            for (int i = 0; i < kRounds; ++i) {
                std::uint64_t h = table.insert(std::make_shared<Thing>(Thing{t * kRounds + i}));
                auto found = table.lookup(h);
                if (!found || found->value != t * kRounds + i) ++failures;
                mine.push_back(h);
                if (i % 2 == 1) {
                    if (table.take(mine.front())) ++taken;
                    mine.erase(mine.begin());
                }
            }
            for (std::uint64_t h : mine) {
                if (table.take(h)) ++taken;
                if (table.take(h)) ++failures; // a second take must fail
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(taken.load(), kThreads * kRounds);
    EXPECT_EQ(table.size(), 0u);
}

} // namespace

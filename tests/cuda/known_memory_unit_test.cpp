// SPDX-License-Identifier: Apache-2.0
// known_memory (cuda_common/src/known_memory.hpp): the extents of xfer's own buffers that
// answer for a copy's pointers without a driver query. No device needed: addresses are only
// compared, never touched.
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "known_memory.hpp"

namespace {

using namespace xfer::cuda;

// Addresses nobody dereferences: each test uses its own range so that tests do not meet.
const void *at(std::uintptr_t address) { return reinterpret_cast<const void *>(address); }

std::optional<Memory> lookup(const void *p) {
    Memory m = Memory::pageable;
    if (known_memory::find(p, &m)) return m;
    return std::nullopt;
}

TEST(KnownMemory, AnswersInsideAnExtentAndNowhereElse) {
    const std::uintptr_t base = 0x7a0000000000;
    EXPECT_EQ(std::nullopt, lookup(at(base)));
    known_memory::add(at(base), 4096, Memory::device);
    EXPECT_EQ(Memory::device, lookup(at(base)));
    EXPECT_EQ(Memory::device, lookup(at(base + 100)));
    EXPECT_EQ(Memory::device, lookup(at(base + 4095)));
    EXPECT_EQ(std::nullopt, lookup(at(base + 4096))); // one past the end
    EXPECT_EQ(std::nullopt, lookup(at(base - 1)));
    known_memory::remove(at(base));
    EXPECT_EQ(std::nullopt, lookup(at(base)));
    EXPECT_EQ(std::nullopt, lookup(at(base + 100)));
}

TEST(KnownMemory, APairIsAnsweredAsEachPointerAlone) {
    const std::uintptr_t base = 0x7a0800000000;
    known_memory::add(at(base), 4096, Memory::device);
    known_memory::add(at(base + 0x100000), 4096, Memory::pinned_host);
    const auto both = known_memory::find_pair(at(base + 8), at(base + 0x100000 + 4095));
    EXPECT_TRUE(both.dst_known);
    EXPECT_TRUE(both.src_known);
    EXPECT_EQ(Memory::device, both.dst);
    EXPECT_EQ(Memory::pinned_host, both.src);
    const auto one = known_memory::find_pair(at(base + 0x100000 + 4096), at(base)); // dst one past its end
    EXPECT_FALSE(one.dst_known);
    EXPECT_TRUE(one.src_known);
    EXPECT_EQ(Memory::device, one.src);
    known_memory::remove(at(base)); // a removed extent leaves this thread's cache too
    const auto gone = known_memory::find_pair(at(base + 0x100000), at(base + 8));
    EXPECT_TRUE(gone.dst_known);
    EXPECT_EQ(Memory::pinned_host, gone.dst);
    EXPECT_FALSE(gone.src_known);
    known_memory::remove(at(base + 0x100000));
    const auto none = known_memory::find_pair(at(base + 0x100000), at(base + 8));
    EXPECT_FALSE(none.dst_known);
    EXPECT_FALSE(none.src_known);
}

TEST(KnownMemory, AReusedAddressNeverGetsTheOldAnswer) {
    const std::uintptr_t base = 0x7a1000000000;
    known_memory::add(at(base), 1 << 20, Memory::device);
    ASSERT_EQ(Memory::device, lookup(at(base + 64))); // now in this thread's cache
    known_memory::remove(at(base));
    known_memory::add(at(base), 1 << 20, Memory::pinned_host); // freed and allocated again
    EXPECT_EQ(Memory::pinned_host, lookup(at(base + 64)));
    known_memory::remove(at(base));
}

TEST(KnownMemory, ManyExtentsBeyondTheThreadCacheAllAnswer) {
    const std::uintptr_t base = 0x7a2000000000;
    constexpr int kExtents = 64; // far more than a thread caches
    for (int i = 0; i < kExtents; ++i) {
        known_memory::add(at(base + i * 0x10000), 0x8000, i % 2 ? Memory::managed : Memory::pageable);
    }
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < kExtents; ++i) {
            EXPECT_EQ(i % 2 ? Memory::managed : Memory::pageable, lookup(at(base + i * 0x10000 + 0x7fff))) << i;
            EXPECT_EQ(std::nullopt, lookup(at(base + i * 0x10000 + 0x8000))) << i; // the gap between
        }
    }
    for (int i = 0; i < kExtents; ++i) known_memory::remove(at(base + i * 0x10000));
    EXPECT_EQ(std::nullopt, lookup(at(base)));
}

TEST(KnownMemory, ForgetOverlappingDropsExactlyTheOverlappingExtents) {
    const std::uintptr_t base = 0x7a3000000000;
    known_memory::add(at(base), 0x1000, Memory::pageable);          // before the range
    known_memory::add(at(base + 0x1000), 0x1000, Memory::pageable); // straddles its start
    known_memory::add(at(base + 0x2800), 0x100, Memory::pageable);  // inside
    known_memory::add(at(base + 0x3000), 0x1000, Memory::pageable); // starts at its end
    for (std::uintptr_t off : {0x0, 0x1000, 0x2800, 0x3000}) ASSERT_TRUE(lookup(at(base + off))) << off;
    known_memory::forget_overlapping(at(base + 0x1800), 0x1800); // [base+0x1800, base+0x3000)
    EXPECT_EQ(Memory::pageable, lookup(at(base)));
    EXPECT_EQ(std::nullopt, lookup(at(base + 0x1000)));
    EXPECT_EQ(std::nullopt, lookup(at(base + 0x2800)));
    EXPECT_EQ(Memory::pageable, lookup(at(base + 0x3000)));
    known_memory::remove(at(base));
    known_memory::remove(at(base + 0x3000));
}

TEST(KnownMemory, ARemovalReachesAnotherThreadsCache) {
    const std::uintptr_t base = 0x7a4000000000;
    known_memory::add(at(base), 4096, Memory::device);
    std::atomic<int> step{0};
    std::optional<Memory> before, after;
    std::thread reader([&] {
        before = lookup(at(base + 8)); // cached in the reader's thread
        step = 1;
        while (step.load() != 2) std::this_thread::yield();
        after = lookup(at(base + 8));
    });
    while (step.load() != 1) std::this_thread::yield();
    known_memory::remove(at(base));
    step = 2;
    reader.join();
    EXPECT_EQ(Memory::device, before);
    EXPECT_EQ(std::nullopt, after);
}

TEST(KnownMemory, LookupsRaceAddsAndRemovesWithoutAWrongAnswer) {
    const std::uintptr_t stable = 0x7a5000000000, churn = 0x7a6000000000;
    known_memory::add(at(stable), 4096, Memory::pinned_host);
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
        readers.emplace_back([&] {
            while (!stop.load()) {
                if (lookup(at(stable + 1)) != Memory::pinned_host) ++wrong;
                const auto m = lookup(at(churn + 1));
                if (m && *m != Memory::managed) ++wrong; // present or not, never another memory
            }
        });
    }
    for (int i = 0; i < 500; ++i) {
        known_memory::add(at(churn), 4096, Memory::managed);
        known_memory::remove(at(churn));
    }
    stop = true;
    for (auto &r : readers) r.join();
    EXPECT_EQ(0, wrong.load());
    EXPECT_EQ(std::nullopt, lookup(at(churn + 1)));
    known_memory::remove(at(stable));
}

} // namespace

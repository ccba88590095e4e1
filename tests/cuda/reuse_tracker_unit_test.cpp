// SPDX-License-Identifier: Apache-2.0
// The reuse tracker (backends/cuda_common/src/user_memory/reuse_tracker.hpp): counts per range,
// ranges told apart by extent, overlaps forgotten, the byte window. No device needed (cuda_unit).
#include <gtest/gtest.h>

#include "user_memory/reuse_tracker.hpp"

namespace xfer::cuda::user_memory {
namespace {

constexpr std::size_t kPage = 4096;

TEST(ReuseTracker, CountsCopiesOfTheSameRange) {
    ReuseTracker t(1 << 20);
    EXPECT_EQ(1u, t.note(0x10000, 8 * kPage).copies);
    EXPECT_EQ(2u, t.note(0x10000, 8 * kPage).copies);
    EXPECT_EQ(3u, t.note(0x10000, 8 * kPage).copies);
    EXPECT_EQ(1u, t.note(0x40000, 8 * kPage).copies); // another range
    EXPECT_EQ(2u, t.size());
    EXPECT_EQ(16 * kPage, t.bytes());
}

TEST(ReuseTracker, AnotherExtentOrAnOverlapIsANewRange) {
    ReuseTracker t(1 << 20);
    t.note(0x10000, 8 * kPage);
    t.note(0x10000, 8 * kPage);
    EXPECT_EQ(1u, t.note(0x10000, 4 * kPage).copies); // same start, other extent
    EXPECT_EQ(1u, t.size());
    EXPECT_EQ(1u, t.note(0x12000, 8 * kPage).copies); // overlaps: the first goes
    EXPECT_EQ(1u, t.size());
    EXPECT_EQ(8 * kPage, t.bytes());
}

TEST(ReuseTracker, OtherMemoryAtTheSameAddressIsANewRange) {
    ReuseTracker t(1 << 20);
    EXPECT_EQ(1u, t.note(0x10000, 8 * kPage, 111).copies);
    EXPECT_EQ(2u, t.note(0x10000, 8 * kPage, 111).copies);
    // Freed and mapped again: the same addresses, another first page.
    EXPECT_EQ(1u, t.note(0x10000, 8 * kPage, 222).copies);
    EXPECT_EQ(2u, t.note(0x10000, 8 * kPage, 222).copies);
    EXPECT_EQ(1u, t.size());
}

TEST(ReuseTracker, TheWindowForgetsTheLeastRecentlyCopied) {
    ReuseTracker t(4 * kPage * 3); // three ranges of 4 pages
    t.note(0x10000, 4 * kPage);
    t.note(0x20000, 4 * kPage);
    t.note(0x30000, 4 * kPage);
    t.note(0x10000, 4 * kPage); // 0x10000 is the most recent now
    t.note(0x40000, 4 * kPage); // 0x20000 goes
    EXPECT_EQ(3u, t.size());
    EXPECT_EQ(1u, t.note(0x20000, 4 * kPage).copies);             // forgotten: counted afresh (and 0x30000 goes)
    EXPECT_EQ(3u, t.note(0x10000, 4 * kPage).copies);             // kept its count
    EXPECT_EQ(1u, t.note(0x10000 + 0x100000, 16 * kPage).copies); // larger than the window: never kept
    EXPECT_LE(t.bytes(), t.window());
}

TEST(ReuseTracker, MarksAndForgets) {
    ReuseTracker t(1 << 20);
    t.note(0x10000, 8 * kPage);
    t.mark(0x10000, 8 * kPage, RangeState::pending);
    EXPECT_EQ(RangeState::pending, t.note(0x10000, 8 * kPage).state);
    t.mark(0x10000, 4 * kPage, RangeState::refused); // another extent: nothing
    EXPECT_EQ(RangeState::pending, t.note(0x10000, 8 * kPage).state);
    t.note(0x80000, 8 * kPage);
    t.forget(0x11000, kPage); // inside the first range: it goes, the other stays
    EXPECT_EQ(1u, t.size());
    EXPECT_EQ(1u, t.note(0x10000, 8 * kPage).copies);
    t.forget(0, ~std::uintptr_t{0});
    EXPECT_EQ(0u, t.size());
    EXPECT_EQ(0u, t.bytes());
}

} // namespace
} // namespace xfer::cuda::user_memory

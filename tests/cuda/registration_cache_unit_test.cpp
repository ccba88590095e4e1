// SPDX-License-Identifier: Apache-2.0
// The registration cache's bookkeeping (backends/cuda_common/src/user_memory): LRU order under the byte limit,
// range lookup, and the page identity that keeps a freed and re-mapped range from hitting a
// stale registration. No device needed (cuda_unit).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "user_memory/page_frames.hpp"
#include "user_memory/registration_lru.hpp"

namespace xfer::cuda::user_memory {
namespace {

CachedRange range(std::uintptr_t start, std::size_t bytes) {
    CachedRange r;
    r.start = start;
    r.bytes = bytes;
    return r;
}

TEST(RegistrationCacheLru, FindsOnlyRangesThatCoverTheCopyWhole) {
    RegistrationLru lru(1 << 30);
    lru.insert(range(0x10000, 0x4000));
    EXPECT_NE(nullptr, lru.find(0x10000, 0x4000));
    EXPECT_NE(nullptr, lru.find(0x11000, 0x1000));
    EXPECT_EQ(nullptr, lru.find(0x13000, 0x2000)); // runs past the end
    EXPECT_EQ(nullptr, lru.find(0xf000, 0x2000));  // starts before
    EXPECT_EQ(nullptr, lru.find(0x20000, 0x1000));
}

TEST(RegistrationCacheLru, OverlappingNamesEveryTouchedRange) {
    RegistrationLru lru(1 << 30);
    lru.insert(range(0x10000, 0x2000));
    lru.insert(range(0x14000, 0x2000));
    lru.insert(range(0x20000, 0x1000));
    EXPECT_EQ((std::vector<std::uintptr_t>{0x10000, 0x14000}), lru.overlapping(0x11000, 0x4000));
    EXPECT_TRUE(lru.overlapping(0x12000, 0x2000).empty()); // exactly the gap
    EXPECT_EQ((std::vector<std::uintptr_t>{0x20000}), lru.overlapping(0x1f000, 0x2000));
}

TEST(RegistrationCacheLru, EvictsLeastRecentlyUsedFirstToStayUnderTheLimit) {
    RegistrationLru lru(0x10000);
    lru.insert(range(0x100000, 0x4000)); // oldest
    lru.insert(range(0x200000, 0x4000));
    lru.insert(range(0x300000, 0x4000));
    lru.touch(*lru.find(0x100000, 1)); // now the newest
    EXPECT_EQ(0xc000u, lru.bytes());
    std::vector<std::uintptr_t> victims;
    ASSERT_TRUE(lru.victims_for(0x4000, &victims));
    EXPECT_TRUE(victims.empty()); // fits exactly
    ASSERT_TRUE(lru.victims_for(0x8000, &victims));
    EXPECT_EQ((std::vector<std::uintptr_t>{0x200000}), victims);
    ASSERT_TRUE(lru.victims_for(0xc000, &victims));
    EXPECT_EQ((std::vector<std::uintptr_t>{0x200000, 0x300000}), victims);
    EXPECT_FALSE(lru.victims_for(0x10001, &victims)); // larger than the limit: never cached
    EXPECT_TRUE(victims.empty());
    const CachedRange taken = lru.take(0x200000);
    EXPECT_EQ(0x4000u, taken.bytes);
    EXPECT_EQ(0x8000u, lru.bytes());
    EXPECT_EQ(2u, lru.size());
}

TEST(RegistrationCachePages, UntouchedPagesHaveNoIdentity) {
    const std::size_t bytes = 4 * kPageBytes;
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, p);
    std::vector<std::uint64_t> frames;
    EXPECT_FALSE(read_page_frames(reinterpret_cast<std::uintptr_t>(p), 4, &frames));
    munmap(p, bytes);
}

TEST(RegistrationCachePages, AddressesMappedAgainShowOtherFrames) {
    if (!page_frames_readable()) {
        GTEST_SKIP() << "this process cannot read page frame numbers (no CAP_SYS_ADMIN): the cache stays off";
    }
    const std::size_t pages = 8;
    const std::size_t bytes = pages * kPageBytes;
    // The first pages stay alive in a second mapping of the same file, as the driver keeps
    // registered pages alive after the application frees them.
    const int fd = memfd_create("xfer-test", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ftruncate(fd, static_cast<off_t>(bytes)));
    auto *first = static_cast<unsigned char *>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    auto *keep = static_cast<unsigned char *>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    ASSERT_NE(MAP_FAILED, first);
    ASSERT_NE(MAP_FAILED, keep);
    std::memset(first, 0x5a, bytes);
    const auto at = reinterpret_cast<std::uintptr_t>(first);
    std::vector<std::uint64_t> frames;
    ASSERT_TRUE(read_page_frames(at, pages, &frames));
    EXPECT_TRUE(same_page_frames(at, pages, frames.data()));
    // Freed and re-allocated at the same address, then written (as a new malloc would be).
    void *again = mmap(first, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ(static_cast<void *>(first), again);
    std::memset(first, 0x5a, bytes);
    EXPECT_FALSE(same_page_frames(at, pages, frames.data()));
    munmap(first, bytes);
    munmap(keep, bytes);
    close(fd);
}

// A forked child reads its own pages, not its parent's: a page it writes after the fork (copy on
// write: a new frame) shows the new frame, read after the parent read the page before the fork.
TEST(RegistrationCachePages, AForkedChildReadsItsOwnFrames) {
    if (!page_frames_readable()) {
        GTEST_SKIP() << "this process cannot read page frame numbers (no CAP_SYS_ADMIN): the cache stays off";
    }
    auto *p = static_cast<unsigned char *>(
        mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, p);
    p[0] = 1;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    std::vector<std::uint64_t> parent;
    ASSERT_TRUE(read_page_frames(at, 1, &parent)); // the descriptor is open before the fork
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        p[0] = 2; // the child's own copy of the page
        std::vector<std::uint64_t> own;
        _exit(!read_page_frames(at, 1, &own) ? 2 : own[0] == parent[0] ? 3 : 0);
    }
    int status = 0;
    ASSERT_EQ(child, waitpid(child, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "2: the child could not read its frames; 3: it read its parent's";
    EXPECT_TRUE(same_page_frames(at, 1, parent.data())) << "the parent's page moved";
    munmap(p, kPageBytes);
}

} // namespace
} // namespace xfer::cuda::pinned

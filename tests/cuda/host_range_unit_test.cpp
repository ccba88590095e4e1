// SPDX-License-Identifier: Apache-2.0
// host_range_mapped (cuda_common/src/host_range.hpp): mapped ranges yes, a range running into
// an unmapped page no. No device needed.
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "host_range.hpp"

namespace {

using xfer::cuda::host_range_mapped;

TEST(HostRange, MappedRangesAreMappedAndAHoleIsNot) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    // Three pages, the middle one unmapped afterwards.
    void *map = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, map);
    auto *base = static_cast<unsigned char *>(map);
    EXPECT_TRUE(host_range_mapped(base, 3 * page));  // not yet touched: mapped all the same
    EXPECT_TRUE(host_range_mapped(base + 10, page)); // unaligned start, two pages
    EXPECT_TRUE(host_range_mapped(base, 0));
    ASSERT_EQ(0, munmap(base + page, page));
    EXPECT_TRUE(host_range_mapped(base, page));
    EXPECT_TRUE(host_range_mapped(base + 2 * page, page));
    EXPECT_FALSE(host_range_mapped(base, page + 1));     // one byte into the hole
    EXPECT_FALSE(host_range_mapped(base + page - 1, 2)); // straddles into it
    EXPECT_FALSE(host_range_mapped(base, 3 * page));
    munmap(base, page);
    munmap(base + 2 * page, page);
}

TEST(HostRange, StackAndHeapAreMapped) {
    unsigned char local[64] = {};
    EXPECT_TRUE(host_range_mapped(local, sizeof local));
    std::vector<unsigned char> heap(1 << 20);
    EXPECT_TRUE(host_range_mapped(heap.data(), heap.size()));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
// Out-of-memory on every CUDA backend, and where managed memory lands.
#include <cstring>
#include <map>
#include <vector>

#include "gpu_fixture.hpp"
#include "kernels.hpp"

namespace {

using namespace xfer::test;

class GpuOutOfMemory : public GpuBackendTest {};

// Each backend is asked for more than it can have, without ever oversubscribing managed memory:
// pageable and pinned ask cudaMalloc for twice the device; managed asks for more than is free
// (refused before any allocation); zero-copy asks for 1 PiB of mapped host memory, beyond the
// 128 TiB of user address space, so it fails at once rather than pinning host RAM.
TEST_P(GpuOutOfMemory, ReturnsItsStatusAndLeavesTheContextUsable) {
    xfer_device_info info{};
    ASSERT_XFER_OK(xfer_device_get_info(ctx_, &info));
    ASSERT_GT(info.total_memory, 0u);
    const std::map<std::string, std::pair<std::size_t, const char *>> ask = {
        {"pageable", {info.total_memory * 2, "cudaMalloc"}},
        {"pinned", {info.total_memory * 2, "cudaMalloc"}},
        {"managed", {info.free_memory + (std::size_t{1} << 30), "refused"}},
        {"zerocopy", {std::size_t{1} << 50, "cudaHostAlloc"}},
    };
    const auto &[bytes, call] = ask.at(GetParam());
    xfer_buffer sentinel = reinterpret_cast<xfer_buffer>(0x42);
    xfer_buffer buf = sentinel;
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY, xfer_alloc(ctx_, bytes, XFER_ALLOC_DEFAULT, &buf)) << xfer_last_error();
    EXPECT_EQ(sentinel, buf);
    EXPECT_NE(nullptr, std::strstr(xfer_last_error(), call)) << xfer_last_error();

    // Still usable: a small buffer round-trips.
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const auto data = random_bytes(1u << 20, seed);
    ASSERT_XFER_OK(xfer_alloc(ctx_, data.size(), XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), data.size());
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, data.size(), stream_));
    std::vector<unsigned char> device_bytes(data.size(), 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device_bytes.data(), xfer_device_ptr(buf), data.size(),
                                     XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(device_bytes == data);
    EXPECT_XFER_OK(xfer_free(buf));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuOutOfMemory, ::testing::ValuesIn(kCudaBackends), param_name);

class GpuManaged : public GpuBackendTest {
  protected:
    void SetUp() override {
        GpuBackendTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        int concurrent = 0;
        ASSERT_EQ(cudaSuccess, cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
        ASSERT_EQ(1, concurrent) << "these tests check prefetch, which needs concurrentManagedAccess";
    }

    static int range_attribute(cudaMemRangeAttribute attr, const void *p, std::size_t n) {
        int value = -12345;
        EXPECT_EQ(cudaSuccess, cudaMemRangeGetAttribute(&value, sizeof value, attr, p, n));
        return value;
    }
};

TEST_P(GpuManaged, PrefetchLandsThePagesWhereTheCopyPointsAndKeepsTheData) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 64u << 20;
    const auto data = random_bytes(n, seed);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    void *p = xfer_host_ptr(buf);
    ASSERT_EQ(p, xfer_device_ptr(buf)) << "managed: one pointer for both views";
    std::memcpy(p, data.data(), n); // first touch on the host

    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(cudaMemLocationTypeDevice, range_attribute(cudaMemRangeAttributeLastPrefetchLocationType, p, n));
    EXPECT_EQ(0, range_attribute(cudaMemRangeAttributeLastPrefetchLocationId, p, n));
    EXPECT_EQ(0, range_attribute(cudaMemRangeAttributeLastPrefetchLocation, p, n));

    ASSERT_EQ(cudaSuccess, launch_xor(p, n, 0x3C, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(cudaMemLocationTypeHost, range_attribute(cudaMemRangeAttributeLastPrefetchLocationType, p, n));
    EXPECT_EQ(cudaCpuDeviceId, range_attribute(cudaMemRangeAttributeLastPrefetchLocation, p, n));

    const auto expected = xored(data, 0x3C);
    EXPECT_EQ(0, std::memcmp(expected.data(), p, n));
    EXPECT_XFER_OK(xfer_free(buf));
}

TEST_P(GpuManaged, AllocationFlagsBecomeMemAdvice) {
    const std::size_t n = 4u << 20;
    xfer_buffer mostly = nullptr;
    xfer_buffer on_device = nullptr;
    xfer_buffer on_host = nullptr;
    xfer_buffer plain = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_READ_MOSTLY, &mostly));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_PREFER_DEVICE, &on_device));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_PREFER_HOST, &on_host));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &plain));

    EXPECT_EQ(1, range_attribute(cudaMemRangeAttributeReadMostly, xfer_host_ptr(mostly), n));
    EXPECT_EQ(0, range_attribute(cudaMemRangeAttributeReadMostly, xfer_host_ptr(plain), n));
    EXPECT_EQ(cudaMemLocationTypeDevice,
              range_attribute(cudaMemRangeAttributePreferredLocationType, xfer_host_ptr(on_device), n));
    EXPECT_EQ(0, range_attribute(cudaMemRangeAttributePreferredLocationId, xfer_host_ptr(on_device), n));
    EXPECT_EQ(cudaMemLocationTypeHost,
              range_attribute(cudaMemRangeAttributePreferredLocationType, xfer_host_ptr(on_host), n));
    EXPECT_NE(cudaMemLocationTypeDevice,
              range_attribute(cudaMemRangeAttributePreferredLocationType, xfer_host_ptr(plain), n));
    for (xfer_buffer b : {mostly, on_device, on_host, plain}) {
        EXPECT_XFER_OK(xfer_free(b));
    }
}

INSTANTIATE_TEST_SUITE_P(Managed, GpuManaged, ::testing::Values("managed"), param_name);

} // namespace

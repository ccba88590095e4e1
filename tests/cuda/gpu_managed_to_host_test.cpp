// SPDX-License-Identifier: Apache-2.0
// The managed backend's to_host methods (prefetch, dma, staged): each brings the device's bytes
// back to the host view, whole 2 MiB blocks and unaligned edges alike.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "test_support.hpp"

namespace {

using namespace xfer::test;

class GpuManagedToHost : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuManagedToHost, DeviceWritesArriveInTheHostView) {
    XFER_REQUIRE_CUDA_DEVICE();
    ASSERT_EQ(0, setenv("XFER_MANAGED_TO_HOST", GetParam().c_str(), 1));
    ASSERT_EQ(0, setenv("XFER_MANAGED_TO_HOST_CHUNK", "4MiB", 1));
    xfer_context ctx = nullptr;
    const xfer_status opened = xfer_open("managed", 0, &ctx);
    unsetenv("XFER_MANAGED_TO_HOST");
    unsetenv("XFER_MANAGED_TO_HOST_CHUNK");
    ASSERT_XFER_OK(opened);
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx, &s));
    const std::size_t n = (19u << 20) + 12345; // several chunks, unaligned tail
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx, n, XFER_ALLOC_DEFAULT, &b));
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
    const auto data = random_bytes(n, fresh_seed());
    std::memcpy(host, data.data(), n);
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, n, s));
    // The device changes two spans (one crossing a 2 MiB boundary), then everything comes back.
    auto expected = data;
    const auto native = static_cast<cudaStream_t>(xfer_stream_native(s));
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(host + (2u << 20) - 100, 0xab, 300, native));
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(host + n - 50, 0xcd, 50, native));
    std::memset(expected.data() + (2u << 20) - 100, 0xab, 300);
    std::memset(expected.data() + n - 50, 0xcd, 50);
    // An offset copy first (unaligned start), then the whole buffer.
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 4097, n - 4097, s));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 0, n, s));
    ASSERT_XFER_OK(xfer_stream_synchronize(s));
    EXPECT_EQ(0, std::memcmp(host, expected.data(), n));
    EXPECT_XFER_OK(xfer_close(ctx));
}

TEST_P(GpuManagedToHost, UnknownMethodIsAConfigErrorNamingIt) {
    XFER_REQUIRE_CUDA_DEVICE();
    ASSERT_EQ(0, setenv("XFER_MANAGED_TO_HOST", "teleport", 1));
    xfer_context ctx = nullptr;
    const xfer_status opened = xfer_open("managed", 0, &ctx);
    unsetenv("XFER_MANAGED_TO_HOST");
    EXPECT_EQ(XFER_ERROR_CONFIG, opened);
    EXPECT_NE(std::string(xfer_last_error()).find("teleport"), std::string::npos) << xfer_last_error();
}

INSTANTIATE_TEST_SUITE_P(Methods, GpuManagedToHost, ::testing::Values("prefetch", "dma", "staged"),
                         [](const auto &info) { return info.param; });

} // namespace

// SPDX-License-Identifier: Apache-2.0
// A kernel launched by the test on xfer_stream_native sees what a to-device copy queued before
// it delivered, and a to-host copy queued after it returns the kernel's result: every backend.
#include <cstring>
#include <vector>

#include "gpu_fixture.hpp"
#include "kernels.hpp"

namespace {

using namespace xfer::test;

class GpuKernel : public GpuBackendTest {};

TEST_P(GpuKernel, SeesTheCopiedBytesAndReturnsItsResult) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = (8u << 20) + 123; // odd size: no accidental alignment
    const auto data = random_bytes(n, seed);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), n);

    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    ASSERT_EQ(cudaSuccess, launch_xor(xfer_device_ptr(buf), n, 0x5A, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    const auto expected = xored(data, 0x5A);
    EXPECT_EQ(0, std::memcmp(expected.data(), xfer_host_ptr(buf), n));
    EXPECT_XFER_OK(xfer_free(buf));
}

TEST_P(GpuKernel, ToHostOfARangeReturnsThatRange) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 4u << 20;
    const std::size_t offset = 12345;
    const std::size_t len = (1u << 20) + 7;
    const auto data = random_bytes(n, seed);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), n);

    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    ASSERT_EQ(cudaSuccess, launch_xor(xfer_device_ptr(buf), n, 0xC3, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, offset, len, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    // Separate views: only the copied range changes. Shared views: the host sees it all.
    auto expected = xored(data, 0xC3);
    if (!shared_view()) {
        std::vector<unsigned char> partial(data);
        std::memcpy(partial.data() + offset, expected.data() + offset, len);
        expected.swap(partial);
    }
    EXPECT_EQ(0, std::memcmp(expected.data(), xfer_host_ptr(buf), n));
    EXPECT_XFER_OK(xfer_free(buf));
}

// Stream A runs a slow kernel and records an event; stream B waits for the event and copies
// to the host. Without the wait, B's copy would overtake the kernel and return its input.
TEST_P(GpuKernel, ToHostOnStreamBWaitsForTheKernelOnStreamA) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 2u << 20;
    const auto data = random_bytes(n, seed);
    xfer_buffer buf = nullptr;
    xfer_stream b = nullptr;
    xfer_event done = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &b));
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DISABLE_TIMING, &done));
    std::memcpy(xfer_host_ptr(buf), data.data(), n);
    ASSERT_XFER_OK(xfer_copy(buf, XFER_TO_DEVICE, 0, n));

    ASSERT_EQ(cudaSuccess, launch_spin_then_xor(xfer_device_ptr(buf), n, 0x77, 100, native(stream_)));
    ASSERT_XFER_OK(xfer_event_record(done, stream_));
    ASSERT_XFER_OK(xfer_stream_wait_event(b, done));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, b));
    ASSERT_XFER_OK(xfer_stream_synchronize(b));

    const auto expected = xored(data, 0x77);
    EXPECT_EQ(0, std::memcmp(expected.data(), xfer_host_ptr(buf), n));
    EXPECT_XFER_OK(xfer_event_destroy(done));
    EXPECT_XFER_OK(xfer_stream_destroy(b));
    EXPECT_XFER_OK(xfer_free(buf));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuKernel, ::testing::ValuesIn(kCudaBackends), param_name);

// Backends whose views are separate memories (a to-device copy really sends host bytes).
class GpuSeparateViews : public GpuBackendTest {};

// On one stream: a slow kernel changes the device bytes, a to-host copy brings them into the
// host view, a kernel clears the device view, and a to-device copy sends the host view back.
// A driver that stages the to-device copy when it is called (pageable memory) would send the
// host view's bytes from before the to-host copy landed: stale bytes.
TEST_P(GpuSeparateViews, ToDeviceAfterToHostSendsTheNewBytes) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 4u << 20;
    const auto data = random_bytes(n, seed);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), n);
    ASSERT_XFER_OK(xfer_copy(buf, XFER_TO_DEVICE, 0, n));

    ASSERT_EQ(cudaSuccess, launch_spin_then_xor(xfer_device_ptr(buf), n, 0x99, 50, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, stream_));
    ASSERT_EQ(cudaSuccess, launch_fill(xfer_device_ptr(buf), n, 0, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    std::vector<unsigned char> device_bytes(n, 0);
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, device_bytes.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_EQ(xored(data, 0x99), device_bytes);
    EXPECT_XFER_OK(xfer_free(buf));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuSeparateViews, ::testing::Values("pageable", "pinned"), param_name);

} // namespace

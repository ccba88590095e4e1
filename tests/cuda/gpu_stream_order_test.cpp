// SPDX-License-Identifier: Apache-2.0
// Stream order holds on every backend, pageable included. The trap: the CUDA driver stages a
// copy from pageable memory when the copy is *called*; a host function queued before it that
// writes the source has not run yet, so a naive backend sends the old bytes.
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "delayed_write.hpp"
#include "gpu_fixture.hpp"

namespace {

using namespace xfer::test;

class GpuStreamOrder : public GpuBackendTest {
  protected:
    // A batch of n / chunk copies of `chunk` bytes from pageable memory that a host function
    // queued before it rewrites: the device must get the new bytes.
    void batch_after_delayed_write(std::size_t chunk, std::size_t n);
};

TEST_P(GpuStreamOrder, BufferCopySendsBytesWrittenByAnEarlierHostFunction) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 16u << 20;
    const auto old_bytes = random_bytes(n, seed);
    const auto new_bytes = random_bytes(n, seed + 1);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), old_bytes.data(), n);
    ASSERT_XFER_OK(xfer_copy(buf, XFER_TO_DEVICE, 0, n));

    DelayedWrite write{static_cast<unsigned char *>(xfer_host_ptr(buf)), new_bytes.data(), n};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_then_write, &write));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    std::vector<unsigned char> device_bytes(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device_bytes.data(), xfer_device_ptr(buf), n, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(device_bytes == new_bytes) << "the device got stale bytes: stream order broken";
    EXPECT_XFER_OK(xfer_free(buf));
}

TEST_P(GpuStreamOrder, RawCopyFromPageableMemorySendsBytesWrittenByAnEarlierHostFunction) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 16u << 20;
    std::vector<unsigned char> source = random_bytes(n, seed); // pageable: std::vector
    const auto new_bytes = random_bytes(n, seed + 1);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));

    DelayedWrite write{source.data(), new_bytes.data(), n};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_then_write, &write));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(buf), source.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    std::vector<unsigned char> device_bytes(n, 0);
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, device_bytes.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(device_bytes == new_bytes) << "the device got stale bytes: stream order broken";
    EXPECT_XFER_OK(xfer_free(buf));
}

// Entries of 256 KiB go to the copy engine; entries of 4 KiB are packed on CUDA backends
// (gathered by the host into a staging slot: in stream order here, since the host function
// may still write the sources).
TEST_P(GpuStreamOrder, BatchCopyFromPageableMemorySendsBytesWrittenByAnEarlierHostFunction) {
    for (const std::size_t chunk : {std::size_t{256} << 10, std::size_t{4} << 10}) {
        SCOPED_TRACE(chunk);
        batch_after_delayed_write(chunk, 4u << 20);
    }
}

void GpuStreamOrder::batch_after_delayed_write(std::size_t chunk, std::size_t n) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t chunks = n / chunk;
    std::vector<unsigned char> source = random_bytes(n, seed);
    const auto new_bytes = random_bytes(n, seed + 1);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<size_t> sizes(chunks, chunk);
    for (std::size_t i = 0; i < chunks; ++i) {
        dsts.push_back(static_cast<unsigned char *>(xfer_device_ptr(buf)) + i * chunk);
        srcs.push_back(source.data() + i * chunk);
    }

    DelayedWrite write{source.data(), new_bytes.data(), n};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_then_write, &write));
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), sizes.data(), chunks,
                                           XFER_COPY_HOST_TO_DEVICE, stream_));
    std::vector<unsigned char> device_bytes(n, 0);
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, device_bytes.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(device_bytes == new_bytes) << "the device got stale bytes: stream order broken";
    EXPECT_XFER_OK(xfer_free(buf));
}

// The host backend too: the contract is the same for every backend.
INSTANTIATE_TEST_SUITE_P(AllBackends, GpuStreamOrder,
                         ::testing::Values("pageable", "pinned", "managed", "zerocopy", "host"), param_name);

} // namespace

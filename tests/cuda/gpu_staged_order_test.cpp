// SPDX-License-Identifier: Apache-2.0
// Stream order on the pageable staged path. H2D: the host threads read the pageable source
// when the copy is called, so work queued earlier on the stream that writes the source must be
// done first. D2H: the device bytes must be those of every earlier operation on the stream.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "delayed_write.hpp"
#include "staged_fixture.hpp"

namespace {

using namespace xfer::test;

void sleep_only(void *) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }

class GpuStagedOrder : public StagedCopyTest {
  protected:
    // Several chunks, and staged even where a chunk is below 1 MiB.
    std::size_t n() const { return std::max(3 * chunk(), std::size_t{2} << 20) + 17; }
};

TEST_P(GpuStagedOrder, BufferCopyToDeviceSendsBytesWrittenByAnEarlierHostFunction) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = this->n();
    const auto old_bytes = random_bytes(n, seed);
    const auto new_bytes = random_bytes(n, seed + 1);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), old_bytes.data(), n);

    DelayedWrite write{static_cast<unsigned char *>(xfer_host_ptr(buf)), new_bytes.data(), n};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_then_write, &write));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(read_device(xfer_device_ptr(buf), n) == new_bytes) << "the device got stale bytes";
    EXPECT_XFER_OK(xfer_free(buf));
}

TEST_P(GpuStagedOrder, RawCopyToDeviceSendsBytesWrittenByAnEarlierHostFunction) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = this->n();
    std::vector<unsigned char> source = random_bytes(n, seed);
    const auto new_bytes = random_bytes(n, seed + 1);
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));

    DelayedWrite write{source.data(), new_bytes.data(), n};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_then_write, &write));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(buf), source.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(read_device(xfer_device_ptr(buf), n) == new_bytes) << "the device got stale bytes";
    EXPECT_XFER_OK(xfer_free(buf));
}

// The trap of the issue, on the staged path: D2H into the host view, then H2D of the same
// host view, on one stream: the H2D must send what the D2H brought, not what was there before.
TEST_P(GpuStagedOrder, CopyToDeviceAfterCopyToHostOfTheSameViewSendsTheNewBytes) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = this->n();
    const auto stale = random_bytes(n, seed);
    const auto fresh = random_bytes(n, seed + 1);
    xfer_buffer a = nullptr;
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &a));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &b));
    std::memcpy(xfer_host_ptr(a), stale.data(), n);
    write_device(xfer_device_ptr(a), fresh);

    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_only, nullptr));
    ASSERT_XFER_OK(xfer_copy_async(a, XFER_TO_HOST, 0, n, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), xfer_host_ptr(a), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(read_device(xfer_device_ptr(b), n) == fresh) << "stale bytes: stream order broken";
    EXPECT_XFER_OK(xfer_free(a));
    EXPECT_XFER_OK(xfer_free(b));
}

// D2H after device work queued on the same stream behind a slow host function: the bytes
// must be those the device work wrote.
TEST_P(GpuStagedOrder, CopyToHostSeesDeviceWorkQueuedBeforeIt) {
    const std::size_t n = this->n();
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    write_device(xfer_device_ptr(buf), std::vector<unsigned char>(n, 0x11));
    const auto native = static_cast<cudaStream_t>(xfer_stream_native(stream_));

    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_only, nullptr));
    ASSERT_EQ(cudaSuccess, cudaMemsetAsync(xfer_device_ptr(buf), 0x7e, n, native));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(back == std::vector<unsigned char>(n, 0x7e)) << "raw D2H overtook the memset";
    const auto *host = static_cast<const unsigned char *>(xfer_host_ptr(buf));
    EXPECT_TRUE(std::vector<unsigned char>(host, host + n) == back) << "buffer D2H overtook the memset";
    EXPECT_XFER_OK(xfer_free(buf));
}

INSTANTIATE_TEST_SUITE_P(Pageable, GpuStagedOrder, ::testing::ValuesIn(kStagingCases), staging_case_name);

} // namespace

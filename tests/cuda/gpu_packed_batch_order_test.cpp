// SPDX-License-Identifier: Apache-2.0
// Packed batches (xfer_memcpy_batch_async of small copies) keep stream order on every CUDA
// backend. The packer gathers pageable sources of a batch to the device during the call when no
// earlier work on the stream may still write host memory, and in stream order (a host function)
// otherwise; it waits for a staging slot's previous group only briefly, never for work that the
// caller itself has yet to release. These tests catch each way that could go wrong.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_fixture.hpp"
#include "kernels.hpp"

namespace {

using namespace xfer::test;

constexpr std::size_t kPiece = 4096; // packed: at most batch_pack_max (32 KiB by default)

class GpuPackedBatchOrder : public GpuBackendTest {
  protected:
    // `count` pieces of kPiece bytes: dsts[i] = dst + i * kPiece <- srcs[i] = src + i * kPiece.
    xfer_status batch(void *dst, const void *src, std::size_t count, xfer_copy_kind kind, xfer_stream s) {
        std::vector<void *> dsts;
        std::vector<const void *> srcs;
        std::vector<size_t> sizes(count, kPiece);
        for (std::size_t i = 0; i < count; ++i) {
            dsts.push_back(static_cast<unsigned char *>(dst) + i * kPiece);
            srcs.push_back(static_cast<const unsigned char *>(src) + i * kPiece);
        }
        return xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), sizes.data(), count, kind, s);
    }

    std::vector<unsigned char> device_bytes(xfer_buffer buf, std::size_t n) {
        std::vector<unsigned char> out(n, 0);
        EXPECT_XFER_OK(xfer_memcpy_async(ctx_, out.data(), xfer_device_ptr(buf), n, XFER_COPY_DEFAULT, stream_));
        EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
        return out;
    }
};

// A batch to the host writes pageable memory once the stream reaches it (after a 50 ms
// kernel here); a batch and a single copy to the device queued right after it read that memory
// and must send what the first batch wrote, not what was there at call time.
TEST_P(GpuPackedBatchOrder, CopiesToTheDeviceSendWhatAnEarlierBatchToTheHostWrote) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t count = 256;
    const std::size_t n = count * kPiece;
    const unsigned char key = 0x5a;
    const auto expected = random_bytes(n, seed);
    const std::vector<unsigned char> keyed = xored(expected, key);
    std::vector<unsigned char> host = random_bytes(n, seed + 1); // pageable, stale until the batch
    xfer_buffer from = nullptr;
    xfer_buffer by_batch = nullptr;
    xfer_buffer by_copy = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &from));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &by_batch));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &by_copy));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(from), keyed.data(), n, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    ASSERT_EQ(launch_spin_then_xor(xfer_device_ptr(from), n, key, 50, native(stream_)), cudaSuccess);
    ASSERT_XFER_OK(batch(host.data(), xfer_device_ptr(from), count, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(batch(xfer_device_ptr(by_batch), host.data(), count, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, xfer_device_ptr(by_copy), host.data(), 16 * kPiece, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    EXPECT_TRUE(host == expected) << "the batch to the host wrote wrong bytes";
    EXPECT_TRUE(device_bytes(by_batch, n) == expected) << "the batch to the device read the host before it was written";
    const auto copied = device_bytes(by_copy, n);
    EXPECT_TRUE(std::equal(copied.begin(), copied.begin() + 16 * kPiece, expected.begin()))
        << "the copy to the device read the host before the batch to the host wrote it";
    EXPECT_XFER_OK(xfer_free(from));
    EXPECT_XFER_OK(xfer_free(by_batch));
    EXPECT_XFER_OK(xfer_free(by_copy));
}

// Opens when the test says so: holds the stream it runs on (and CUDA's host-function thread).
void wait_for_release(void *p) {
    auto *release = static_cast<std::atomic<bool> *>(p);
    while (!release->load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Where the device views are device memory (pageable, pinned) small copies from pageable
// memory are packed through the staging slots. On managed and zero-copy they go to the copy
// engine, whose copies from pageable memory into such memory wait for the stream (xfer.h), so a
// stream held until after the call is not theirs to take.
class GpuPackedBatchSlots : public GpuPackedBatchOrder {};

// Three batches on a stream held until the caller releases it, after the calls: the staging
// slots (two) are all taken by queued groups, so the third batch must not wait for its slot
// (that would wait for ever), and every byte must still arrive once the stream runs.
TEST_P(GpuPackedBatchSlots, BatchesOnAStreamHeldByTheCallerReturnAndArriveExactly) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t count = 64;
    const std::size_t part = count * kPiece;
    const std::size_t batches = 3;
    std::vector<std::vector<unsigned char>> sources;
    for (std::size_t b = 0; b < batches; ++b) {
        sources.push_back(random_bytes(part, seed + b));
    }
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, batches * part, XFER_ALLOC_DEFAULT, &buf));
    xfer_stream holder = nullptr;
    xfer_event held = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &holder));
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DISABLE_TIMING, &held));
    std::atomic<bool> release{false};
    ASSERT_XFER_OK(xfer_stream_launch_host_func(holder, wait_for_release, &release));
    ASSERT_XFER_OK(xfer_event_record(held, holder));
    ASSERT_XFER_OK(xfer_stream_wait_event(stream_, held));

    xfer_status st[batches];
    for (std::size_t b = 0; b < batches; ++b) {
        st[b] = batch(static_cast<unsigned char *>(xfer_device_ptr(buf)) + b * part, sources[b].data(), count,
                      XFER_COPY_HOST_TO_DEVICE, stream_);
    }
    release.store(true);
    for (std::size_t b = 0; b < batches; ++b) {
        ASSERT_XFER_OK(st[b]);
    }
    const auto got = device_bytes(buf, batches * part);
    for (std::size_t b = 0; b < batches; ++b) {
        EXPECT_TRUE(std::equal(sources[b].begin(), sources[b].end(), got.begin() + b * part)) << "batch " << b;
    }
    EXPECT_XFER_OK(xfer_stream_synchronize(holder));
    EXPECT_XFER_OK(xfer_event_destroy(held));
    EXPECT_XFER_OK(xfer_stream_destroy(holder));
    EXPECT_XFER_OK(xfer_free(buf));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuPackedBatchOrder, ::testing::ValuesIn(kCudaBackends), param_name);
INSTANTIATE_TEST_SUITE_P(DeviceMemoryViews, GpuPackedBatchSlots, ::testing::Values("pageable", "pinned"), param_name);

} // namespace

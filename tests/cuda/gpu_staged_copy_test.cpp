// SPDX-License-Identifier: Apache-2.0
// The pageable backend's staged path: H2D and D2H of random bytes at sizes around its
// thresholds, byte for byte, through buffers and raw copies, on one stream and on two streams
// from two threads at once. Each direction is checked against the CUDA runtime's own copy.
#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "staged_fixture.hpp"

namespace {

using namespace xfer::test;

class GpuStagedCopy : public StagedCopyTest {};

TEST_P(GpuStagedCopy, BufferCopiesEachDirectionByteForByte) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    for (std::size_t n : sizes()) {
        SCOPED_TRACE(n);
        const std::size_t offset = 17; // an unaligned part of the buffer
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, offset + n, XFER_ALLOC_DEFAULT, &buf));
        auto *host = static_cast<unsigned char *>(xfer_host_ptr(buf));
        auto *device = static_cast<unsigned char *>(xfer_device_ptr(buf));

        const auto up = random_bytes(n, seed + n);
        std::memcpy(host + offset, up.data(), n);
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, offset, n, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        std::memset(host, 0, offset + n); // the source may be reused once the copy is known complete
        EXPECT_TRUE(read_device(device + offset, n) == up) << "H2D";

        const auto down = xored(up, 0x5a);
        write_device(device + offset, down);
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, offset, n, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_EQ(0, std::memcmp(host + offset, down.data(), n)) << "D2H";
        EXPECT_XFER_OK(xfer_free(buf));
    }
}

TEST_P(GpuStagedCopy, RawCopiesEachDirectionByteForByte) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    for (std::size_t n : sizes()) {
        SCOPED_TRACE(n);
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
        void *device = xfer_device_ptr(buf);

        std::vector<unsigned char> source = random_bytes(n, seed + n); // pageable: std::vector
        const std::vector<unsigned char> expected = source;
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, source.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        std::fill(source.begin(), source.end(), 0); // reusable once the copy is known complete
        EXPECT_TRUE(read_device(device, n) == expected) << "H2D";

        const auto down = xored(expected, 0xa5);
        write_device(device, down);
        std::vector<unsigned char> back(n, 0);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), device, n, XFER_COPY_DEFAULT, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_TRUE(back == down) << "D2H";
        EXPECT_XFER_OK(xfer_free(buf));
    }
}

// Several threads share one context's ring and host threads, each on its own stream, with
// H2D and D2H copies interleaved; every byte must land where its own thread sent it.
TEST_P(GpuStagedCopy, TwoThreadsOnTwoStreamsOfOneContext) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = std::max(3 * chunk(), std::size_t{24} << 20) + 17; // several chunks each
    const int rounds = 6;
    struct Worker {
        xfer_stream stream = nullptr;
        xfer_buffer buf = nullptr;
        int mismatches = 0;
        xfer_status failure = XFER_SUCCESS;
        std::string error;
    };
    Worker workers[2];
    for (auto &w : workers) {
        ASSERT_XFER_OK(xfer_stream_create(ctx_, &w.stream));
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &w.buf));
    }
    auto run = [&](int id) {
        Worker &w = workers[id];
        auto *host = static_cast<unsigned char *>(xfer_host_ptr(w.buf));
        std::vector<unsigned char> raw_back(n, 0);
        for (int r = 0; r < rounds && w.failure == XFER_SUCCESS; ++r) {
            const auto data = random_bytes(n, seed + 100 * id + r);
            std::memcpy(host, data.data(), n);
            auto step = [&](xfer_status st) {
                if (st != XFER_SUCCESS && w.failure == XFER_SUCCESS) {
                    w.failure = st;
                    w.error = xfer_last_error();
                }
            };
            step(xfer_copy_async(w.buf, XFER_TO_DEVICE, 0, n, w.stream));
            step(xfer_stream_synchronize(w.stream));
            std::memset(host, 0, n);
            step(xfer_copy_async(w.buf, XFER_TO_HOST, 0, n, w.stream));
            step(xfer_memcpy_async(ctx_, raw_back.data(), xfer_device_ptr(w.buf), n, XFER_COPY_DEVICE_TO_HOST,
                                   w.stream));
            step(xfer_stream_synchronize(w.stream));
            w.mismatches += std::memcmp(host, data.data(), n) != 0 ? 1 : 0;
            w.mismatches += raw_back != data ? 1 : 0;
        }
    };
    std::thread a(run, 0);
    std::thread b(run, 1);
    a.join();
    b.join();
    for (int id = 0; id < 2; ++id) {
        EXPECT_EQ(XFER_SUCCESS, workers[id].failure) << "thread " << id << ": " << workers[id].error;
        EXPECT_EQ(0, workers[id].mismatches) << "thread " << id << " got bytes it did not send";
        EXPECT_XFER_OK(xfer_free(workers[id].buf));
        EXPECT_XFER_OK(xfer_stream_destroy(workers[id].stream));
    }
}

INSTANTIATE_TEST_SUITE_P(Pageable, GpuStagedCopy, ::testing::ValuesIn(kStagingCases), staging_case_name);

} // namespace

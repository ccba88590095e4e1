// SPDX-License-Identifier: Apache-2.0
// xfer_memcpy_async with every kind, and xfer_memcpy_batch_async. Device pointers are buffers'
// device views, so the same code reaches real device memory on CUDA backends.
#include <algorithm>
#include <numeric>
#include <random>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class RawCopy : public ContractTest {};

TEST_P(RawCopy, HostToHost) {
    const Bytes src = random_bytes(100003, 101);
    Bytes dst(src.size());
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, dst.data(), src.data(), src.size(), XFER_COPY_HOST_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(src, dst));
}

TEST_P(RawCopy, HostToDeviceAndDeviceToHost) {
    const std::size_t bytes = 777777;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes src = random_bytes(bytes, 102);
    Bytes back(bytes);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), src.data(), bytes, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), bytes, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(src, back));
    // The device view really holds the bytes: the buffer's own copy brings them to the host view.
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, bytes));
    EXPECT_TRUE(same_bytes(src, read_host(b, 0, bytes)));
}

TEST_P(RawCopy, DeviceToDevice) {
    const std::size_t bytes = 1 << 20;
    xfer_buffer from = alloc(bytes);
    xfer_buffer to = alloc(bytes);
    ASSERT_NE(from, nullptr);
    ASSERT_NE(to, nullptr);
    const Bytes data = random_bytes(bytes, 103);
    ASSERT_TRUE(write_device(from, 0, data));
    ASSERT_TRUE(write_device(to, 0, random_bytes(bytes, 104)));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(to), xfer_device_ptr(from), bytes,
                                     XFER_COPY_DEVICE_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes device;
    ASSERT_TRUE(read_device(to, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(data, device));
}

TEST_P(RawCopy, DefaultKindInfersTheDirection) {
    const std::size_t bytes = 65536 + 7;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes src = random_bytes(bytes, 105);
    Bytes back(bytes);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), src.data(), bytes, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), bytes, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(src, back));
}

TEST_P(RawCopy, OneByteAndUnalignedPointers) {
    xfer_buffer b = alloc(4096);
    ASSERT_NE(b, nullptr);
    const Bytes src = random_bytes(1001, 106);
    Bytes back(1001);
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(b));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device + 3, src.data() + 1, 1, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device + 5, src.data() + 1, 999, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), device + 3, 1, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data() + 1, device + 5, 999, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(back[0], src[1]);
    EXPECT_TRUE(same_bytes(src.data() + 1, back.data() + 1, 999));
}

TEST_P(RawCopy, BatchOf257CopiesOfRandomSizes) {
    // 257 disjoint pieces of random size and random order, host -> device in one batch, then
    // device -> a separate host vector in another batch.
    const std::size_t count = 257;
    std::mt19937_64 rng(107);
    std::vector<std::size_t> sizes(count), offsets(count);
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
        sizes[i] = 1 + rng() % 5000;
        offsets[i] = total;
        total += sizes[i] + rng() % 64; // gaps between the pieces must stay untouched
    }
    xfer_buffer b = alloc(total);
    ASSERT_NE(b, nullptr);
    const Bytes untouched = random_bytes(total, 108);
    ASSERT_TRUE(write_device(b, 0, untouched));
    const Bytes src = random_bytes(total, 109);

    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(b));
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<std::size_t> lens;
    Bytes expected = untouched;
    for (std::size_t i : order) {
        dsts.push_back(device + offsets[i]);
        srcs.push_back(src.data() + offsets[i]);
        lens.push_back(sizes[i]);
        std::copy(src.begin() + offsets[i], src.begin() + offsets[i] + sizes[i], expected.begin() + offsets[i]);
    }
    ASSERT_XFER_OK(
        xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), lens.data(), count, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes device_now;
    ASSERT_TRUE(read_device(b, 0, total, &device_now));
    EXPECT_TRUE(same_bytes(expected, device_now));

    Bytes back(total, 0);
    std::vector<void *> back_dsts;
    std::vector<const void *> device_srcs;
    for (std::size_t i : order) {
        back_dsts.push_back(back.data() + offsets[i]);
        device_srcs.push_back(device + offsets[i]);
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, back_dsts.data(), device_srcs.data(), lens.data(), count,
                                           XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    for (std::size_t i = 0; i < count; ++i) {
        EXPECT_TRUE(same_bytes(src.data() + offsets[i], back.data() + offsets[i], sizes[i])) << "piece " << i;
    }
}

TEST_P(RawCopy, BatchIsOrderedAfterEarlierWork) {
    // A buffer copy to the device, then a batch reading the device view, queued back to back.
    const std::size_t bytes = 8192;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(write_device(b, 0, random_bytes(bytes, 110)));
    const Bytes data = random_bytes(bytes, 111);
    write_host(b, 0, data);
    Bytes back(bytes);
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(b));
    void *dsts[2] = {back.data(), back.data() + bytes / 2};
    const void *srcs[2] = {device, device + bytes / 2};
    const std::size_t sizes[2] = {bytes / 2, bytes / 2};
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 2, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data, back));
}

XFER_CONTRACT_SUITE(RawCopy);

} // namespace
} // namespace xfer::test::contract

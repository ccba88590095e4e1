// SPDX-License-Identifier: Apache-2.0
// Buffer copies between the host view and the device view: whole, partial, synchronous,
// and of awkward sizes. Each test is valid on every backend: where host and device view are
// one memory (XFER_CAP_SHARED_VIEW) the expected contents follow that memory, and the copy
// must still keep the data intact.
#include <cstring>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class BufferCopy : public ContractTest {};

TEST_P(BufferCopy, ViewsAndSizeDescribeTheBuffer) {
    const std::size_t bytes = 12345;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(xfer_buffer_size(b), bytes);
    EXPECT_NE(xfer_host_ptr(b), nullptr);
    EXPECT_NE(xfer_device_ptr(b), nullptr);
    if (!shared_view()) {
        EXPECT_NE(xfer_host_ptr(b), xfer_device_ptr(b)) << "two views must be two allocations";
    }
    EXPECT_XFER_OK(xfer_free(b));
}

TEST_P(BufferCopy, RoundTripOfOneByte) {
    xfer_buffer b = alloc(1);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(round_trip(b, random_bytes(1, 1), stream_));
}

TEST_P(BufferCopy, RoundTripOfOddSizes) {
    for (std::size_t bytes : {3u, 17u, 4095u, 4097u, 65537u, 1000003u}) {
        xfer_buffer b = alloc(bytes);
        ASSERT_NE(b, nullptr);
        EXPECT_TRUE(round_trip(b, random_bytes(bytes, bytes), stream_)) << bytes << " bytes";
        EXPECT_XFER_OK(xfer_free(b));
    }
}

TEST_P(BufferCopy, RoundTripOf64MiB) {
    const std::size_t bytes = std::size_t(64) << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(round_trip(b, random_bytes(bytes, 64), stream_));
}

TEST_P(BufferCopy, RoundTripOnANewStream) {
    xfer_stream s = new_stream();
    xfer_buffer b = alloc(100000);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(round_trip(b, random_bytes(100000, 5), s));
    EXPECT_XFER_OK(xfer_stream_destroy(s));
}

TEST_P(BufferCopy, PartialCopyToDeviceChangesOnlyItsRange) {
    const std::size_t bytes = 1 << 20, offset = 4099, length = 70001;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes before = random_bytes(bytes, 21);
    const Bytes after = random_bytes(bytes, 22);
    write_host(b, 0, before);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    write_host(b, 0, after);
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, offset, length, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    // Two views: only [offset, offset+length) of the device view takes the new bytes.
    // One view: the host writes already changed everything; the copy must not disturb it.
    Bytes expected = shared_view() ? after : before;
    std::memcpy(&expected[offset], &after[offset], length);
    Bytes device;
    ASSERT_TRUE(read_device(b, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(expected, device));
    EXPECT_TRUE(same_bytes(after, read_host(b, 0, bytes))) << "a copy to the device must not change the host view";
}

TEST_P(BufferCopy, PartialCopyToHostChangesOnlyItsRange) {
    const std::size_t bytes = 1 << 20, offset = 12345, length = 333333;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes on_device = random_bytes(bytes, 31);
    const Bytes on_host = random_bytes(bytes, 32);
    ASSERT_TRUE(write_device(b, 0, on_device));
    write_host(b, 0, on_host); // one view: this overwrites the device bytes too
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, offset, length, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));

    Bytes expected = on_host;
    if (!shared_view()) {
        std::memcpy(&expected[offset], &on_device[offset], length);
    }
    EXPECT_TRUE(same_bytes(expected, read_host(b, 0, bytes)));
}

TEST_P(BufferCopy, CopyOfTheLastByteAndTheWholeBufferIsInBounds) {
    const std::size_t bytes = 4096;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(bytes, 41);
    write_host(b, 0, data);
    EXPECT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, bytes - 1, 1));
    EXPECT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    Bytes device;
    ASSERT_TRUE(read_device(b, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(data, device));
}

TEST_P(BufferCopy, SynchronousCopyRoundTrips) {
    const std::size_t bytes = 300007;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(bytes, 51);
    write_host(b, 0, data);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    // xfer_copy has returned: the bytes must be in the device view without any synchronise.
    Bytes device;
    ASSERT_TRUE(read_device(b, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(data, device));
    if (!shared_view()) {
        std::memset(xfer_host_ptr(b), 0x5a, bytes);
    }
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, bytes));
    EXPECT_TRUE(same_bytes(data, read_host(b, 0, bytes)));
}

TEST_P(BufferCopy, QueuedCopiesRunInStreamOrder) {
    // Copy to the device, then read the device view, queued back to back without a
    // synchronise in between: the read must see the copy.
    const std::size_t bytes = 2 << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    ASSERT_TRUE(write_device(b, 0, random_bytes(bytes, 61)));
    const Bytes data = random_bytes(bytes, 62);
    write_host(b, 0, data);
    Bytes seen(bytes);
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, seen.data(), xfer_device_ptr(b), bytes, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data, seen));
}

TEST_P(BufferCopy, AllocationHintsAreAccepted) {
    // Hints a backend cannot use are accepted and ignored; the buffer must work either way.
    for (unsigned flags : {XFER_ALLOC_READ_MOSTLY, XFER_ALLOC_PREFER_DEVICE, XFER_ALLOC_PREFER_HOST,
                           XFER_ALLOC_READ_MOSTLY | XFER_ALLOC_PREFER_DEVICE}) {
        xfer_buffer b = alloc(65536, flags);
        ASSERT_NE(b, nullptr) << "flags " << flags;
        EXPECT_TRUE(round_trip(b, random_bytes(65536, 70 + flags), stream_)) << "flags " << flags;
        EXPECT_XFER_OK(xfer_free(b));
    }
}

XFER_CONTRACT_SUITE(BufferCopy);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Releasing objects while work that uses them is still queued: deferred in stream order,
// never a use-after-free (run under AddressSanitizer to prove it).
#include <cstring>
#include <string>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Lifetime : public ContractTest {};

TEST_P(Lifetime, FreeWithQueuedWorkIsDeferred) {
    const std::size_t bytes = 16 << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    write_host(b, 0, random_bytes(bytes, 501));
    // A sleep, not a gate: a backend whose free waits for the stream must not deadlock here.
    auto &sleep_ms = keep<int>(100);
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_ms_host_fn, &sleep_ms));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 0, bytes, stream_));
    EXPECT_XFER_OK(xfer_free(b));
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    // The context goes on working, and the freed handle stays invalid.
    EXPECT_EQ(xfer_buffer_size(b), 0u);
    xfer_buffer again = alloc(bytes);
    ASSERT_NE(again, nullptr);
    EXPECT_TRUE(round_trip(again, random_bytes(bytes, 502), stream_));
}

// A raw copy (single or batched) that reads a buffer's views is queued
// work that uses the buffer too; freeing the buffer must not release the memory under it.
// 8 MiB: on host, glibc gives such blocks back to the OS at once, so a use after free crashes.
TEST_P(Lifetime, FreeWithQueuedRawCopiesOfItsViewsIsDeferred) {
    const std::size_t bytes = 8 << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(bytes, 503);
    write_host(b, 0, data);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    auto &out_single = keep<Bytes>(Bytes(bytes, 0));
    auto &out_batch = keep<Bytes>(Bytes(bytes, 0));
    auto &sleep_ms = keep<int>(100);
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_ms_host_fn, &sleep_ms));
    auto *host = static_cast<const unsigned char *>(xfer_host_ptr(b));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, out_single.data(), host, bytes, XFER_COPY_DEFAULT, stream_));
    // The batch reads the device view, in two halves.
    auto *device = static_cast<const unsigned char *>(xfer_device_ptr(b));
    void *dsts[2] = {out_batch.data(), out_batch.data() + bytes / 2};
    const void *srcs[2] = {device, device + bytes / 2};
    const std::size_t sizes[2] = {bytes / 2, bytes / 2};
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 2, XFER_COPY_DEFAULT, stream_));
    EXPECT_XFER_OK(xfer_free(b));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data, out_single));
    EXPECT_TRUE(same_bytes(data, out_batch));
}

// A raw copy queued on this context's stream that reads a buffer of another context (of the
// same backend and device) holds that buffer too: neither xfer_free of it nor xfer_close of
// its context releases the memory under the copy. 8 MiB, as above, so a use after free crashes.
TEST_P(Lifetime, RawCopyOfAnotherContextsBufferKeepsItAlive) {
    const std::size_t bytes = 8 << 20;
    for (const char *release : {"xfer_free", "xfer_close"}) {
        SCOPED_TRACE(release);
        xfer_context other = nullptr;
        ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &other));
        xfer_buffer b = nullptr;
        ASSERT_XFER_OK(xfer_alloc(other, bytes, XFER_ALLOC_DEFAULT, &b));
        const Bytes data = random_bytes(bytes, 504);
        std::memcpy(xfer_host_ptr(b), data.data(), bytes);
        ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
        auto &from_host = keep<Bytes>(Bytes(bytes, 0));
        auto &from_device = keep<Bytes>(Bytes(bytes, 0));
        // A sleep, not a gate: the CUDA backends' release waits for the device.
        auto &sleep_ms = keep<int>(100);
        ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_ms_host_fn, &sleep_ms));
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, from_host.data(), xfer_host_ptr(b), bytes, XFER_COPY_DEFAULT, stream_));
        ASSERT_XFER_OK(
            xfer_memcpy_async(ctx_, from_device.data(), xfer_device_ptr(b), bytes, XFER_COPY_DEFAULT, stream_));
        if (std::string(release) == "xfer_free") {
            EXPECT_XFER_OK(xfer_free(b));
            EXPECT_XFER_OK(xfer_close(other));
        } else {
            EXPECT_XFER_OK(xfer_close(other));
        }
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_TRUE(same_bytes(data, from_host));
        EXPECT_TRUE(same_bytes(data, from_device));
    }
}

TEST_P(Lifetime, FreeWithQueuedWorkOnSeveralStreams) {
    const std::size_t bytes = 1 << 20;
    xfer_stream s1 = new_stream();
    xfer_stream s2 = new_stream();
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(s1, nullptr);
    ASSERT_NE(s2, nullptr);
    ASSERT_NE(b, nullptr);
    auto &sleep_ms = keep<int>(30);
    // Each stream copies its own half: two streams writing the same bytes would be a race.
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s1, sleep_ms_host_fn, &sleep_ms));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes / 2, s1));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s2, sleep_ms_host_fn, &sleep_ms));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, bytes / 2, bytes / 2, s2));
    EXPECT_XFER_OK(xfer_free(b));
    EXPECT_XFER_OK(xfer_stream_destroy(s1));
    EXPECT_XFER_OK(xfer_stream_synchronize(s2));
}

TEST_P(Lifetime, DestroyingAnEventDoesNotDisturbWorkWaitingOnIt) {
    xfer_stream a = new_stream();
    xfer_stream b = new_stream();
    xfer_event e = new_event();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_NE(e, nullptr);
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(a));
    ASSERT_XFER_OK(xfer_event_record(e, a));
    ASSERT_XFER_OK(xfer_stream_wait_event(b, e));
    EXPECT_XFER_OK(xfer_event_destroy(e));
    gate.open();
    EXPECT_XFER_OK(xfer_stream_synchronize(b));
    EXPECT_XFER_OK(xfer_stream_synchronize(a));
    EXPECT_FALSE(gate.timed_out());
}

TEST_P(Lifetime, CloseReleasesLiveObjectsAndInvalidatesTheirHandles) {
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &other));
    xfer_stream s = nullptr;
    xfer_event e = nullptr;
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(other, &s));
    ASSERT_XFER_OK(xfer_event_create(other, XFER_EVENT_DEFAULT, &e));
    ASSERT_XFER_OK(xfer_alloc(other, 1 << 20, XFER_ALLOC_DEFAULT, &b));
    write_host(b, 0, random_bytes(1 << 20, 503));
    // Work still queued at close: close must wait for it before it frees anything.
    auto &sleep_ms = keep<int>(30);
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s, sleep_ms_host_fn, &sleep_ms));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, 1 << 20, s));
    ASSERT_XFER_OK(xfer_event_record(e, s));

    EXPECT_XFER_OK(xfer_close(other));

    EXPECT_XFER_FAILS(xfer_free(b), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_stream_synchronize(s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_destroy(s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_event_query(e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_destroy(e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_close(other), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_TRUE(yields_null([&] { return xfer_host_ptr(b); }, {"buffer"}));
    xfer_buffer late = nullptr;
    EXPECT_XFER_FAILS(xfer_alloc(other, 64, XFER_ALLOC_DEFAULT, &late), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_EQ(late, nullptr);

    // The fixture's context is untouched.
    xfer_buffer mine = alloc(4096);
    ASSERT_NE(mine, nullptr);
    EXPECT_TRUE(round_trip(mine, random_bytes(4096, 504), stream_));
}

XFER_CONTRACT_SUITE(Lifetime);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Peer copies between contexts on two devices of one backend (xfer_memcpy_peer_async,
// xfer_copy_peer_async, xfer_device_can_access_peer). The host backend is run with three
// emulated devices (XFER_HOST_DEVICES, read at every xfer_open), so every test runs in CI;
// a CUDA backend needs two GPUs for the copies and skips them with one, while the bad-input
// tests that need a single device (same device, closed context) run everywhere.
#include <cstdlib>
#include <cstring>
#include <optional>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class PeerCopy : public ContractTest {
  protected:
    void SetUp() override {
        // Before the fixture opens ctx_: the host backend's device count is read at xfer_open.
        if (backend() == "host") {
            host_devices_.emplace("XFER_HOST_DEVICES", "3");
        }
        ContractTest::SetUp();
    }

    void TearDown() override {
        if (peer_ != nullptr) {
            EXPECT_XFER_OK(xfer_close(peer_));
            peer_ = nullptr;
        }
        ContractTest::TearDown();
        host_devices_.reset();
    }

    int device_count() {
        int count = 0;
        EXPECT_XFER_OK(xfer_backend_count(&count));
        for (int i = 0; i < count; ++i) {
            xfer_backend_info info{};
            EXPECT_XFER_OK(xfer_backend_get_info(i, &info));
            if (backend() == info.name) return info.device_count;
        }
        return 0;
    }

    // Opens peer_ on device 1; false (the caller skips) when the backend has one device.
    bool open_peer() {
        if (device_count() < 2) return false;
        EXPECT_XFER_OK(xfer_open(backend().c_str(), 1, &peer_));
        return peer_ != nullptr;
    }

    xfer_buffer alloc_on(xfer_context ctx, std::size_t bytes) {
        xfer_buffer b = nullptr;
        EXPECT_XFER_OK(xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, &b));
        return b;
    }

    // Writes `data` into the device view of `b` (of context `ctx`) through xfer_memcpy_async.
    ::testing::AssertionResult put_device(xfer_context ctx, xfer_buffer b, std::size_t offset, const Bytes &data) {
        xfer_stream s = nullptr;
        xfer_status st = xfer_stream_create(ctx, &s);
        if (st == XFER_SUCCESS) {
            auto *device = static_cast<unsigned char *>(xfer_device_ptr(b)) + offset;
            st = xfer_memcpy_async(ctx, device, data.data(), data.size(), XFER_COPY_HOST_TO_DEVICE, s);
            const xfer_status waited = xfer_stream_destroy(s);
            st = st != XFER_SUCCESS ? st : waited;
        }
        if (st != XFER_SUCCESS)
            return ::testing::AssertionFailure() << xfer_status_string(st) << ": " << xfer_last_error();
        return ::testing::AssertionSuccess();
    }

    // Reads `bytes` of the device view of `b` back into a separate host vector.
    ::testing::AssertionResult get_device(xfer_context ctx, xfer_buffer b, std::size_t offset, std::size_t bytes,
                                          Bytes *out) {
        Bytes data(bytes);
        xfer_stream s = nullptr;
        xfer_status st = xfer_stream_create(ctx, &s);
        if (st == XFER_SUCCESS) {
            const auto *device = static_cast<const unsigned char *>(xfer_device_ptr(b)) + offset;
            st = xfer_memcpy_async(ctx, data.data(), device, bytes, XFER_COPY_DEVICE_TO_HOST, s);
            const xfer_status waited = xfer_stream_destroy(s);
            st = st != XFER_SUCCESS ? st : waited;
        }
        if (st != XFER_SUCCESS)
            return ::testing::AssertionFailure() << xfer_status_string(st) << ": " << xfer_last_error();
        *out = std::move(data);
        return ::testing::AssertionSuccess();
    }

    xfer_context peer_ = nullptr;

  private:
    std::optional<EnvGuard> host_devices_; // restored after the fixture closed its context
};

#define REQUIRE_TWO_DEVICES()                                                                                          \
    do {                                                                                                               \
        if (!open_peer()) GTEST_SKIP() << "backend " << backend() << " has fewer than 2 devices";                      \
    } while (0)

TEST_P(PeerCopy, RawCopyBothDirectionsOnEitherStream) {
    REQUIRE_TWO_DEVICES();
    const std::size_t bytes = (8 << 20) + 3; // not a multiple of anything
    xfer_buffer a = alloc(bytes);
    xfer_buffer b = alloc_on(peer_, bytes);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    xfer_stream peer_stream = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(peer_, &peer_stream));

    const Bytes one = random_bytes(bytes, 1201);
    ASSERT_TRUE(put_device(ctx_, a, 0, one));
    // device 0 -> device 1 on device 0's stream (the source pushes)
    ASSERT_XFER_OK(xfer_memcpy_peer_async(peer_, xfer_device_ptr(b), ctx_, xfer_device_ptr(a), bytes, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes got;
    ASSERT_TRUE(get_device(peer_, b, 0, bytes, &got));
    EXPECT_TRUE(same_bytes(one, got));

    // device 1 -> device 0 on device 0's stream (the destination pulls)
    const Bytes two = random_bytes(bytes, 1202);
    ASSERT_TRUE(put_device(peer_, b, 0, two));
    ASSERT_XFER_OK(xfer_memcpy_peer_async(ctx_, xfer_device_ptr(a), peer_, xfer_device_ptr(b), bytes, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    ASSERT_TRUE(get_device(ctx_, a, 0, bytes, &got));
    EXPECT_TRUE(same_bytes(two, got));

    // device 0 -> device 1 on device 1's stream (the destination pulls)
    const Bytes three = random_bytes(bytes, 1210);
    ASSERT_TRUE(put_device(ctx_, a, 0, three));
    ASSERT_XFER_OK(xfer_memcpy_peer_async(peer_, xfer_device_ptr(b), ctx_, xfer_device_ptr(a), bytes, peer_stream));
    ASSERT_XFER_OK(xfer_stream_synchronize(peer_stream));
    ASSERT_TRUE(get_device(peer_, b, 0, bytes, &got));
    EXPECT_TRUE(same_bytes(three, got));
}

TEST_P(PeerCopy, BufferCopyMovesTheRangeAndNothingElse) {
    REQUIRE_TWO_DEVICES();
    const std::size_t bytes = 1 << 20;
    xfer_buffer src = alloc(bytes);
    xfer_buffer dst = alloc_on(peer_, bytes);
    ASSERT_NE(src, nullptr);
    ASSERT_NE(dst, nullptr);
    const Bytes source = random_bytes(bytes, 1203);
    const Bytes before = random_bytes(bytes, 1204);
    ASSERT_TRUE(put_device(ctx_, src, 0, source));
    ASSERT_TRUE(put_device(peer_, dst, 0, before));
    const std::size_t src_offset = 4097, dst_offset = 123, n = 300001;
    ASSERT_XFER_OK(xfer_copy_peer_async(dst, dst_offset, src, src_offset, n, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes got;
    ASSERT_TRUE(get_device(peer_, dst, 0, bytes, &got));
    Bytes expected = before;
    std::memcpy(expected.data() + dst_offset, source.data() + src_offset, n);
    EXPECT_TRUE(same_bytes(expected, got));
}

TEST_P(PeerCopy, OrderedAfterEarlierWorkOnItsStream) {
    REQUIRE_TWO_DEVICES();
    const std::size_t bytes = 4 << 20;
    xfer_buffer src = alloc(bytes);
    xfer_buffer dst = alloc_on(peer_, bytes);
    ASSERT_NE(src, nullptr);
    ASSERT_NE(dst, nullptr);
    const Bytes data = random_bytes(bytes, 1205);
    write_host(src, 0, data);
    // Held at a gate: the peer copy must wait for the H2D queued before it on the same stream.
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_copy_async(src, XFER_TO_DEVICE, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_copy_peer_async(dst, 0, src, 0, bytes, stream_));
    gate.open();
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_FALSE(gate.timed_out());
    Bytes got;
    ASSERT_TRUE(get_device(peer_, dst, 0, bytes, &got));
    EXPECT_TRUE(same_bytes(data, got));
}

TEST_P(PeerCopy, FreeingEitherBufferWithTheCopyQueuedIsDeferred) {
    REQUIRE_TWO_DEVICES();
    const std::size_t bytes = 2 << 20;
    xfer_buffer src = alloc(bytes);
    xfer_buffer dst = alloc_on(peer_, bytes);
    ASSERT_NE(src, nullptr);
    ASSERT_NE(dst, nullptr);
    ASSERT_TRUE(put_device(ctx_, src, 0, random_bytes(bytes, 1206)));
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_copy_peer_async(dst, 0, src, 0, bytes, stream_));
    gate.open(); // before the frees: a backend whose free waits for queued work must not deadlock
    EXPECT_XFER_OK(xfer_free(src));
    EXPECT_XFER_OK(xfer_free(dst));
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
}

TEST_P(PeerCopy, DirectAccessQueryAnswersBothWays) {
    REQUIRE_TWO_DEVICES();
    int there = -1, back = -1;
    ASSERT_XFER_OK(xfer_device_can_access_peer(ctx_, peer_, &there));
    ASSERT_XFER_OK(xfer_device_can_access_peer(peer_, ctx_, &back));
    EXPECT_TRUE(there == 0 || there == 1) << there;
    EXPECT_TRUE(back == 0 || back == 1) << back;
    if (backend() == "host") {
        EXPECT_EQ(there, 1);
        EXPECT_EQ(back, 1);
    }
    EXPECT_XFER_FAILS(xfer_device_can_access_peer(ctx_, peer_, nullptr), XFER_ERROR_INVALID_ARGUMENT,
                      {"can_access", "NULL"});
}

TEST_P(PeerCopy, SameDeviceIsRefused) {
    xfer_context same = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &same));
    xfer_buffer a = alloc(4096);
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(same, 4096, XFER_ALLOC_DEFAULT, &b));
    const Bytes data = random_bytes(4096, 1207);
    ASSERT_TRUE(put_device(same, b, 0, data));
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(same, xfer_device_ptr(b), ctx_, xfer_device_ptr(a), 4096, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"both bound", "device 0", "xfer_memcpy_async"});
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(ctx_, xfer_device_ptr(a), ctx_, xfer_device_ptr(a), 4096, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"device 0"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(b, 0, a, 0, 4096, stream_), XFER_ERROR_INVALID_ARGUMENT, {"device 0"});
    int can = -1;
    EXPECT_XFER_FAILS(xfer_device_can_access_peer(ctx_, same, &can), XFER_ERROR_INVALID_ARGUMENT, {"device 0"});
    EXPECT_EQ(can, -1); // output untouched on failure
    // Nothing was queued: b still holds its bytes.
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes got;
    ASSERT_TRUE(get_device(same, b, 0, 4096, &got));
    EXPECT_TRUE(same_bytes(data, got));
    EXPECT_XFER_OK(xfer_close(same));
}

TEST_P(PeerCopy, ClosedContextIsRefused) {
    xfer_context gone = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &gone));
    ASSERT_XFER_OK(xfer_close(gone));
    xfer_buffer a = alloc(4096);
    ASSERT_NE(a, nullptr);
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(gone, xfer_device_ptr(a), ctx_, xfer_device_ptr(a), 4096, stream_),
                      XFER_ERROR_INVALID_HANDLE, {"dst_ctx", "not a live"});
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(ctx_, xfer_device_ptr(a), gone, xfer_device_ptr(a), 4096, stream_),
                      XFER_ERROR_INVALID_HANDLE, {"src_ctx", "not a live"});
    int can = -1;
    EXPECT_XFER_FAILS(xfer_device_can_access_peer(ctx_, gone, &can), XFER_ERROR_INVALID_HANDLE, {"peer"});
    EXPECT_XFER_FAILS(xfer_device_can_access_peer(nullptr, ctx_, &can), XFER_ERROR_INVALID_HANDLE, {"ctx", "NULL"});
}

TEST_P(PeerCopy, BuffersOfAClosedContextAreRefused) {
    REQUIRE_TWO_DEVICES();
    xfer_buffer a = alloc(4096);
    xfer_buffer b = alloc_on(peer_, 4096);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_XFER_OK(xfer_close(peer_));
    peer_ = nullptr;
    EXPECT_XFER_FAILS(xfer_copy_peer_async(b, 0, a, 0, 4096, stream_), XFER_ERROR_INVALID_HANDLE,
                      {"dst", "not a live"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(a, 0, b, 0, 4096, stream_), XFER_ERROR_INVALID_HANDLE,
                      {"src", "not a live"});
}

TEST_P(PeerCopy, BadArgumentsLeaveTheDestinationIntact) {
    REQUIRE_TWO_DEVICES();
    const std::size_t bytes = 64 << 10;
    xfer_buffer src = alloc(bytes);
    xfer_buffer dst = alloc_on(peer_, bytes);
    ASSERT_NE(src, nullptr);
    ASSERT_NE(dst, nullptr);
    const Bytes before = random_bytes(bytes, 1208);
    ASSERT_TRUE(put_device(ctx_, src, 0, random_bytes(bytes, 1209)));
    ASSERT_TRUE(put_device(peer_, dst, 0, before));
    void *d = xfer_device_ptr(dst);
    const void *s = xfer_device_ptr(src);

    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, nullptr, ctx_, s, bytes, stream_), XFER_ERROR_INVALID_ARGUMENT,
                      {"dst", "NULL"});
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, d, ctx_, nullptr, bytes, stream_), XFER_ERROR_INVALID_ARGUMENT,
                      {"src", "NULL"});
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, d, ctx_, s, 0, stream_), XFER_ERROR_INVALID_SIZE, {"bytes", "0"});
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, d, ctx_, s, bytes, nullptr), XFER_ERROR_INVALID_HANDLE, {"s"});
    // Ranges that overlap (the same memory named twice) are refused as for xfer_memcpy_async.
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, d, ctx_, static_cast<const char *>(d) + 100, 1000, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"overlap", "900"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, 0, src, 0, 0, stream_), XFER_ERROR_INVALID_SIZE, {"bytes", "0"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, 1, src, 0, bytes, stream_), XFER_ERROR_OUT_OF_BOUNDS,
                      {"dst_offset", "past the end"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, 0, src, bytes, 1, stream_), XFER_ERROR_OUT_OF_BOUNDS,
                      {"src_offset", "past the end"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, SIZE_MAX, src, 0, 2, stream_), XFER_ERROR_INVALID_SIZE, {"overflows"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(nullptr, 0, src, 0, 1, stream_), XFER_ERROR_INVALID_HANDLE, {"dst"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, 0, reinterpret_cast<xfer_buffer>(stream_), 0, 1, stream_),
                      XFER_ERROR_INVALID_HANDLE, {"src", "stream"});

    // A stream of a third context (same backend, device 0) belongs to neither.
    xfer_context third = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &third));
    xfer_stream foreign = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(third, &foreign));
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(peer_, d, ctx_, s, bytes, foreign), XFER_ERROR_INVALID_HANDLE,
                      {"neither"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(dst, 0, src, 0, bytes, foreign), XFER_ERROR_INVALID_HANDLE, {"neither"});
    EXPECT_XFER_OK(xfer_close(third));

    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    Bytes got;
    ASSERT_TRUE(get_device(peer_, dst, 0, bytes, &got));
    EXPECT_TRUE(same_bytes(before, got));
}

TEST_P(PeerCopy, ContextOfAnotherBackendIsRefused) {
    const auto &all = backends_under_test();
    std::string other;
    for (const std::string &name : all) {
        if (name != backend()) {
            other = name;
            break;
        }
    }
    if (other.empty()) GTEST_SKIP() << "no second backend available here (the core suite covers it with mocks)";
    xfer_context foreign = nullptr;
    ASSERT_XFER_OK(xfer_open(other.c_str(), 0, &foreign));
    xfer_buffer a = alloc(4096);
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(foreign, 4096, XFER_ALLOC_DEFAULT, &b));
    EXPECT_XFER_FAILS(xfer_memcpy_peer_async(foreign, xfer_device_ptr(b), ctx_, xfer_device_ptr(a), 4096, stream_),
                      XFER_ERROR_INVALID_HANDLE, {"backend", "one backend"});
    EXPECT_XFER_FAILS(xfer_copy_peer_async(b, 0, a, 0, 4096, stream_), XFER_ERROR_INVALID_HANDLE, {"one backend"});
    int can = -1;
    EXPECT_XFER_FAILS(xfer_device_can_access_peer(ctx_, foreign, &can), XFER_ERROR_INVALID_HANDLE, {"one backend"});
    EXPECT_XFER_OK(xfer_close(foreign));
}

XFER_CONTRACT_SUITE(PeerCopy);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Streams: completion queries, host functions in stream order, native handles, destruction.
// Host functions stand in for kernels: they run on every backend (cudaLaunchHostFunc on CUDA).
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Streams : public ContractTest {};

TEST_P(Streams, NewStreamIsIdle) {
    xfer_stream s = new_stream();
    ASSERT_NE(s, nullptr);
    EXPECT_XFER_OK(xfer_stream_query(s));
    EXPECT_XFER_OK(xfer_stream_synchronize(s));
    EXPECT_XFER_OK(xfer_stream_destroy(s));
}

TEST_P(Streams, QueryIsNotReadyWhileWorkIsPendingThenSucceeds) {
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    EXPECT_EQ(xfer_stream_query(stream_), XFER_ERROR_NOT_READY) << xfer_last_error();
    gate.open();
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_XFER_OK(xfer_stream_query(stream_));
    EXPECT_FALSE(gate.timed_out());
}

struct OrderLog {
    std::mutex mutex;
    std::vector<int> entries;
};

struct OrderEntry {
    OrderLog *log;
    int index;
};

void append_to_log(void *p) {
    auto *entry = static_cast<OrderEntry *>(p);
    std::lock_guard<std::mutex> lock(entry->log->mutex);
    entry->log->entries.push_back(entry->index);
}

TEST_P(Streams, HostFunctionsRunInStreamOrder) {
    auto &log = keep<OrderLog>();
    auto &entries = keep<std::vector<OrderEntry>>();
    const int count = 100;
    for (int i = 0; i < count; ++i) {
        entries.push_back(OrderEntry{&log, i});
    }
    xfer_buffer b = alloc(4096);
    ASSERT_NE(b, nullptr);
    write_host(b, 0, random_bytes(4096, 201));
    for (int i = 0; i < count; ++i) {
        ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, append_to_log, &entries[i]));
        if (i % 10 == 0) { // copies in between must not reorder anything
            ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, 4096, stream_));
        }
    }
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    std::lock_guard<std::mutex> lock(log.mutex);
    ASSERT_EQ(log.entries.size(), std::size_t(count));
    for (int i = 0; i < count; ++i) {
        EXPECT_EQ(log.entries[i], i);
    }
}

struct Snapshot {
    const unsigned char *source;
    std::size_t bytes;
    Bytes taken;
};

void take_snapshot(void *p) {
    auto *s = static_cast<Snapshot *>(p);
    s->taken.assign(s->source, s->source + s->bytes);
}

TEST_P(Streams, HostFunctionRunsAfterEarlierCopiesComplete) {
    const std::size_t bytes = 1 << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(bytes, 202);
    ASSERT_TRUE(write_device(b, 0, data));
    if (!shared_view()) {
        write_host(b, 0, random_bytes(bytes, 203));
    }
    auto &snapshot = keep<Snapshot>(Snapshot{static_cast<const unsigned char *>(xfer_host_ptr(b)), bytes, {}});
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, take_snapshot, &snapshot));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data, snapshot.taken));
}

TEST_P(Streams, NativeHandleIdentifiesTheStream) {
    xfer_stream other = new_stream();
    ASSERT_NE(other, nullptr);
    void *mine = xfer_stream_native(stream_);
    void *theirs = xfer_stream_native(other);
    EXPECT_NE(mine, nullptr) << xfer_last_error();
    EXPECT_NE(theirs, nullptr) << xfer_last_error();
    EXPECT_NE(mine, theirs);
    EXPECT_EQ(xfer_stream_native(stream_), mine) << "the native handle must be stable";
    EXPECT_XFER_OK(xfer_stream_destroy(other));
}

struct DelayedFlag {
    int delay_ms;
    std::atomic<bool> set{false};
};

void sleep_then_set(void *p) {
    auto *flag = static_cast<DelayedFlag *>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(flag->delay_ms));
    flag->set = true;
}

TEST_P(Streams, DestroyWaitsForQueuedWork) {
    xfer_stream s = new_stream();
    ASSERT_NE(s, nullptr);
    auto &flag = keep<DelayedFlag>();
    flag.delay_ms = 50;
    const std::size_t bytes = 1 << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(bytes, 204);
    write_host(b, 0, data);
    ASSERT_XFER_OK(xfer_stream_launch_host_func(s, sleep_then_set, &flag));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, s));
    ASSERT_XFER_OK(xfer_stream_destroy(s));
    EXPECT_TRUE(flag.set.load()) << "xfer_stream_destroy returned before queued work ran";
    Bytes device;
    ASSERT_TRUE(read_device(b, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(data, device));
}

TEST_P(Streams, ManyStreamsWorkSideBySide) {
    const int count = 16;
    std::vector<xfer_stream> streams;
    std::vector<xfer_buffer> buffers;
    std::vector<Bytes> data;
    for (int i = 0; i < count; ++i) {
        streams.push_back(new_stream());
        buffers.push_back(alloc(65536 + i));
        ASSERT_NE(streams.back(), nullptr);
        ASSERT_NE(buffers.back(), nullptr);
        data.push_back(random_bytes(65536 + i, 300 + i));
        write_host(buffers.back(), 0, data.back());
    }
    for (int i = 0; i < count; ++i) { // all queued first, then all synchronised
        ASSERT_XFER_OK(xfer_copy_async(buffers[i], XFER_TO_DEVICE, 0, data[i].size(), streams[i]));
    }
    for (int i = 0; i < count; ++i) {
        ASSERT_XFER_OK(xfer_stream_synchronize(streams[i]));
        Bytes device;
        ASSERT_TRUE(read_device(buffers[i], 0, data[i].size(), &device, streams[i]));
        EXPECT_TRUE(same_bytes(data[i], device)) << "stream " << i;
        EXPECT_XFER_OK(xfer_stream_destroy(streams[i]));
    }
}

// The application's own stream (here the legacy default stream, which every CUDA program has)
// wrapped as an xfer_stream carries copies exactly as an xfer stream does; host has no native
// stream to wrap and says so.
TEST_P(Streams, WrappedDefaultStreamCarriesCopiesAndIsHandedBack) {
    xfer_stream wrapped = nullptr;
    if (backend() == "host") {
        EXPECT_XFER_FAILS(xfer_stream_wrap(ctx_, nullptr, &wrapped), XFER_ERROR_NOT_SUPPORTED, {"xfer_stream_wrap"});
        EXPECT_EQ(wrapped, nullptr);
        return;
    }
    ASSERT_XFER_OK(xfer_stream_wrap(ctx_, nullptr, &wrapped));
    EXPECT_NE(xfer_stream_native(wrapped), nullptr);
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{48} << 20}) { // direct, and staged on pageable
        SCOPED_TRACE(bytes);
        xfer_buffer b = alloc(bytes);
        ASSERT_NE(b, nullptr);
        EXPECT_TRUE(round_trip(b, random_bytes(bytes, 1401), wrapped));
        EXPECT_XFER_OK(xfer_free(b));
    }
    EXPECT_XFER_FAILS(xfer_stream_wrap(ctx_, nullptr, &wrapped), XFER_ERROR_INVALID_STATE, {"already"});
    ASSERT_XFER_OK(xfer_stream_destroy(wrapped));
    // The native stream lives on: wrapping it again works.
    ASSERT_XFER_OK(xfer_stream_wrap(ctx_, nullptr, &wrapped));
    ASSERT_XFER_OK(xfer_stream_destroy(wrapped));
}

XFER_CONTRACT_SUITE(Streams);

} // namespace
} // namespace xfer::test::contract

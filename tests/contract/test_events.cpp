// SPDX-License-Identifier: Apache-2.0
// Events: completion, re-recording, elapsed time, and ordering between streams.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Events : public ContractTest {};

TEST_P(Events, NeverRecordedEventIsComplete) {
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    EXPECT_XFER_OK(xfer_event_query(e));
    EXPECT_XFER_OK(xfer_event_synchronize(e));
    // Waiting on it is a no-op: the stream stays usable and idle.
    EXPECT_XFER_OK(xfer_stream_wait_event(stream_, e));
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_XFER_OK(xfer_stream_query(stream_));
    EXPECT_XFER_OK(xfer_event_destroy(e));
}

TEST_P(Events, QueryIsNotReadyUntilTheStreamReachesTheRecord) {
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    EXPECT_EQ(xfer_event_query(e), XFER_ERROR_NOT_READY) << xfer_last_error();
    gate.open();
    EXPECT_XFER_OK(xfer_event_synchronize(e));
    EXPECT_XFER_OK(xfer_event_query(e));
    EXPECT_FALSE(gate.timed_out());
}

TEST_P(Events, AnEventRecordedLastCompletesTogetherWithItsStream) {
    // Once the event recorded last on a stream is complete, the stream is idle (as in CUDA):
    // the host backend once let a query see the event done and the stream still busy.
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    for (int i = 0; i < 2000; ++i) {
        ASSERT_XFER_OK(xfer_event_record(e, stream_));
        ASSERT_XFER_OK(xfer_event_synchronize(e));
        ASSERT_XFER_OK(xfer_stream_query(stream_)) << "round " << i;
    }
}

TEST_P(Events, ReRecordingMovesTheEvent) {
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    ASSERT_XFER_OK(xfer_event_synchronize(e));
    ASSERT_XFER_OK(xfer_event_query(e));
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    EXPECT_EQ(xfer_event_query(e), XFER_ERROR_NOT_READY) << "the query must refer to the latest record";
    gate.open();
    EXPECT_XFER_OK(xfer_event_synchronize(e));
    EXPECT_XFER_OK(xfer_event_query(e));
}

TEST_P(Events, ElapsedTimeSpansTheWorkBetweenTwoRecords) {
    xfer_event start = new_event();
    xfer_event end = new_event();
    ASSERT_NE(start, nullptr);
    ASSERT_NE(end, nullptr);
    auto &sleep_ms = keep<int>(20);
    ASSERT_XFER_OK(xfer_event_record(start, stream_));
    ASSERT_XFER_OK(xfer_stream_launch_host_func(stream_, sleep_ms_host_fn, &sleep_ms));
    ASSERT_XFER_OK(xfer_event_record(end, stream_));
    ASSERT_XFER_OK(xfer_event_synchronize(end));
    EXPECT_XFER_OK(xfer_event_query(start));
    float ms = -1.0f;
    ASSERT_XFER_OK(xfer_event_elapsed_ms(start, end, &ms));
    EXPECT_TRUE(std::isfinite(ms)) << ms;
    EXPECT_GE(ms, 0.0f);
    // Not a performance check: the events must be stamped when the stream reaches them, so
    // the host function's sleep lies between them (half of it, to leave room for clocks).
    EXPECT_GE(ms, sleep_ms / 2.0f);
}

TEST_P(Events, ElapsedIsNotReadyWhileAnEventIsPending) {
    xfer_event start = new_event();
    xfer_event end = new_event();
    ASSERT_NE(start, nullptr);
    ASSERT_NE(end, nullptr);
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(xfer_event_record(start, stream_));
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_event_record(end, stream_));
    float ms = -1.0f;
    EXPECT_EQ(xfer_event_elapsed_ms(start, end, &ms), XFER_ERROR_NOT_READY) << xfer_last_error();
    EXPECT_EQ(ms, -1.0f) << "output arguments are written only on success";
    gate.open();
    ASSERT_XFER_OK(xfer_event_synchronize(end));
    EXPECT_XFER_OK(xfer_event_elapsed_ms(start, end, &ms));
    EXPECT_TRUE(std::isfinite(ms));
    EXPECT_GE(ms, 0.0f);
}

TEST_P(Events, EventWithoutTimingStillOrdersWork) {
    xfer_event e = new_event(XFER_EVENT_DISABLE_TIMING);
    ASSERT_NE(e, nullptr);
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    EXPECT_EQ(xfer_event_query(e), XFER_ERROR_NOT_READY);
    gate.open();
    EXPECT_XFER_OK(xfer_event_synchronize(e));
    EXPECT_XFER_OK(xfer_event_query(e));
}

struct LateWriter {
    unsigned char *host_view;
    Bytes data;
};

void sleep_then_write(void *p) {
    auto *w = static_cast<LateWriter *>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::memcpy(w->host_view, w->data.data(), w->data.size());
}

TEST_P(Events, StreamWaitsForAnEventRecordedOnAnotherStream) {
    // Stream A: a host function that sleeps, then writes the host view; a copy to the device;
    // an event. Stream B waits for the event, then reads the device view. B sees A's bytes
    // only if the wait held B back until A got there.
    const std::size_t bytes = 1 << 20;
    xfer_stream a = new_stream();
    xfer_stream b = new_stream();
    xfer_event done = new_event();
    xfer_buffer buf = alloc(bytes);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_NE(done, nullptr);
    ASSERT_NE(buf, nullptr);
    const Bytes stale = random_bytes(bytes, 401);
    ASSERT_TRUE(write_device(buf, 0, stale)); // one view: this is the host view as well
    auto &writer =
        keep<LateWriter>(LateWriter{static_cast<unsigned char *>(xfer_host_ptr(buf)), random_bytes(bytes, 402)});
    auto &seen = keep<Bytes>(bytes);

    ASSERT_XFER_OK(xfer_stream_launch_host_func(a, sleep_then_write, &writer));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, bytes, a));
    ASSERT_XFER_OK(xfer_event_record(done, a));
    ASSERT_XFER_OK(xfer_stream_wait_event(b, done));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, seen.data(), xfer_device_ptr(buf), bytes, XFER_COPY_DEVICE_TO_HOST, b));
    ASSERT_XFER_OK(xfer_stream_synchronize(b));
    EXPECT_TRUE(same_bytes(writer.data, seen));
    EXPECT_XFER_OK(xfer_event_query(done));
    EXPECT_XFER_OK(xfer_stream_synchronize(a));
}

struct Flag {
    std::atomic<bool> set{false};
};

void set_flag(void *p) { static_cast<Flag *>(p)->set = true; }

TEST_P(Events, WaitHoldsTheStreamUntilTheRecordCompletes) {
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
    auto &ran = keep<Flag>();
    ASSERT_XFER_OK(xfer_stream_launch_host_func(b, set_flag, &ran));
    // Re-recording after the wait must not change what the wait waits for.
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(xfer_stream_query(b), XFER_ERROR_NOT_READY) << "b must wait for a's record";
    EXPECT_FALSE(ran.set.load()) << "work after the wait ran before the event completed";
    gate.open();
    EXPECT_XFER_OK(xfer_stream_synchronize(b));
    EXPECT_TRUE(ran.set.load());
    // Not a query: a's record being complete does not mean a's own bookkeeping has caught up.
    EXPECT_XFER_OK(xfer_stream_synchronize(a));
    EXPECT_FALSE(gate.timed_out());
}

// Destroying an event returns without waiting for a thread blocked in xfer_event_synchronize
// on it: what that thread waits for (here a gate on the stream) may be up to the destroying
// thread. That thread's wait still ends normally once the work completes. (Before, destroy
// waited for the waiter, which waited for the gate that only this thread opens: a deadlock,
// broken here by the bounded wait.)
TEST_P(Events, DestroyDoesNotWaitForAThreadInSynchronize) {
    xfer_event e = nullptr;
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DEFAULT, &e));
    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(stream_));
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    std::atomic<bool> waiting{false};
    xfer_status waited = XFER_ERROR_INTERNAL;
    std::thread waiter([&] {
        waiting = true;
        waited = xfer_event_synchronize(e);
    });
    while (!waiting.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // well inside the wait by now
    std::atomic<bool> destroyed{false};
    xfer_status destroy_status = XFER_ERROR_INTERNAL;
    std::thread destroyer([&] {
        destroy_status = xfer_event_destroy(e);
        destroyed = true;
    });
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!destroyed.load() && std::chrono::steady_clock::now() < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const bool returned_first = destroyed.load();
    EXPECT_TRUE(returned_first) << "xfer_event_destroy waited for the thread in xfer_event_synchronize";
    gate.open();
    destroyer.join();
    waiter.join();
    EXPECT_EQ(destroy_status, XFER_SUCCESS) << xfer_last_error();
    EXPECT_EQ(waited, XFER_SUCCESS) << "the waiter's wait completes normally";
    EXPECT_XFER_FAILS(xfer_event_query(e), XFER_ERROR_INVALID_HANDLE, {"e"});
    EXPECT_XFER_FAILS(xfer_event_synchronize(e), XFER_ERROR_INVALID_HANDLE, {"e"});
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_FALSE(gate.timed_out());
}

XFER_CONTRACT_SUITE(Events);

} // namespace
} // namespace xfer::test::contract

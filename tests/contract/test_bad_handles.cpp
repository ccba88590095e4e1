// SPDX-License-Identifier: Apache-2.0
// Handles that are NULL, released, never created, of the wrong kind or of another context:
// each call gets XFER_ERROR_INVALID_HANDLE with a message naming the kind of handle, and the
// objects the test still holds keep working afterwards.
#include <cstdint>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class BadHandles : public ContractTest {
  protected:
    void SetUp() override {
        ContractTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        buf_ = alloc(kBytes);
        event_ = new_event();
        ASSERT_NE(buf_, nullptr);
        ASSERT_NE(event_, nullptr);
    }

    // State intact: the buffer, stream and event of the fixture still do their work.
    void expect_state_intact() {
        EXPECT_TRUE(round_trip(buf_, random_bytes(kBytes, 777), stream_));
        EXPECT_XFER_OK(xfer_event_record(event_, stream_));
        EXPECT_XFER_OK(xfer_event_synchronize(event_));
    }

    static constexpr std::size_t kBytes = 8192;
    xfer_buffer buf_ = nullptr;
    xfer_event event_ = nullptr;
};

void noop_host_fn(void *) {}

TEST_P(BadHandles, NullContext) {
    xfer_buffer b = nullptr;
    xfer_stream s = nullptr;
    xfer_event e = nullptr;
    xfer_context_info ci{};
    xfer_device_info di{};
    int dst = 0, src = 1;
    EXPECT_XFER_FAILS(xfer_alloc(nullptr, 64, 0, &b), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_stream_create(nullptr, &s), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_event_create(nullptr, 0, &e), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_context_get_info(nullptr, &ci), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_device_get_info(nullptr, &di), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(nullptr, &dst, &src, sizeof dst, XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_XFER_FAILS(xfer_close(nullptr), XFER_ERROR_INVALID_HANDLE, {"context"});
    EXPECT_EQ(b, nullptr);
    EXPECT_EQ(s, nullptr);
    EXPECT_EQ(e, nullptr);
    expect_state_intact();
}

TEST_P(BadHandles, NullBuffer) {
    EXPECT_XFER_FAILS(xfer_free(nullptr), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_copy_async(nullptr, XFER_TO_DEVICE, 0, 1, stream_), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_copy(nullptr, XFER_TO_HOST, 0, 1), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_TRUE(yields_null([] { return xfer_host_ptr(nullptr); }, {"buffer"}));
    EXPECT_TRUE(yields_null([] { return xfer_device_ptr(nullptr); }, {"buffer"}));
    EXPECT_TRUE(yields_null([] { return reinterpret_cast<const void *>(xfer_buffer_size(nullptr)); }, {"buffer"}));
    expect_state_intact();
}

TEST_P(BadHandles, NullStream) {
    int dst = 0, src = 1;
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 0, kBytes, nullptr), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, &dst, &src, sizeof dst, XFER_COPY_HOST_TO_HOST, nullptr),
                      XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_synchronize(nullptr), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_query(nullptr), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_destroy(nullptr), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_wait_event(nullptr, event_), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_launch_host_func(nullptr, noop_host_fn, nullptr), XFER_ERROR_INVALID_HANDLE,
                      {"stream"});
    EXPECT_XFER_FAILS(xfer_event_record(event_, nullptr), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_TRUE(yields_null([] { return xfer_stream_native(nullptr); }, {"stream"}));
    EXPECT_EQ(dst, 0) << "a rejected copy must not run";
    expect_state_intact();
}

TEST_P(BadHandles, NullEvent) {
    float ms = -1.0f;
    EXPECT_XFER_FAILS(xfer_event_record(nullptr, stream_), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_synchronize(nullptr), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_query(nullptr), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_destroy(nullptr), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_stream_wait_event(stream_, nullptr), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(nullptr, event_, &ms), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(event_, nullptr, &ms), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_EQ(ms, -1.0f);
    expect_state_intact();
}

TEST_P(BadHandles, FreedBuffer) {
    xfer_buffer b = alloc(4096);
    ASSERT_NE(b, nullptr);
    ASSERT_XFER_OK(xfer_free(b));
    EXPECT_XFER_FAILS(xfer_free(b), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_copy_async(b, XFER_TO_DEVICE, 0, 1, stream_), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_copy(b, XFER_TO_DEVICE, 0, 1), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_TRUE(yields_null([&] { return xfer_host_ptr(b); }, {"buffer"}));
    EXPECT_TRUE(yields_null([&] { return xfer_device_ptr(b); }, {"buffer"}));
    expect_state_intact();
}

TEST_P(BadHandles, FreedBufferStaysInvalidAfterItsSlotIsReused) {
    xfer_buffer old = alloc(4096);
    ASSERT_NE(old, nullptr);
    ASSERT_XFER_OK(xfer_free(old));
    xfer_buffer fresh = alloc(4096);
    ASSERT_NE(fresh, nullptr);
    EXPECT_XFER_FAILS(xfer_free(old), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_TRUE(round_trip(fresh, random_bytes(4096, 601), stream_)) << "the new buffer must be unaffected";
    expect_state_intact();
}

TEST_P(BadHandles, DestroyedStream) {
    xfer_stream s = new_stream();
    ASSERT_NE(s, nullptr);
    ASSERT_XFER_OK(xfer_stream_destroy(s));
    EXPECT_XFER_FAILS(xfer_stream_destroy(s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_synchronize(s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_stream_query(s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 0, kBytes, s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_event_record(event_, s), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_TRUE(yields_null([&] { return xfer_stream_native(s); }, {"stream"}));
    expect_state_intact();
}

TEST_P(BadHandles, DestroyedEvent) {
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    ASSERT_XFER_OK(xfer_event_destroy(e));
    float ms = -1.0f;
    EXPECT_XFER_FAILS(xfer_event_destroy(e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_record(e, stream_), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_query(e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_synchronize(e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_stream_wait_event(stream_, e), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(e, event_, &ms), XFER_ERROR_INVALID_HANDLE, {"event"});
    expect_state_intact();
}

TEST_P(BadHandles, GarbageHandleValues) {
    // Values that were never handed out, including a plausible-looking pointer value.
    for (std::uintptr_t value : {std::uintptr_t(0xdeadbeef), std::uintptr_t(1), ~std::uintptr_t(0)}) {
        auto buffer = reinterpret_cast<xfer_buffer>(value);
        auto stream = reinterpret_cast<xfer_stream>(value);
        auto event = reinterpret_cast<xfer_event>(value);
        auto context = reinterpret_cast<xfer_context>(value);
        xfer_buffer out = nullptr;
        EXPECT_XFER_FAILS(xfer_free(buffer), XFER_ERROR_INVALID_HANDLE, {"buffer"}) << std::hex << value;
        EXPECT_XFER_FAILS(xfer_copy_async(buffer, XFER_TO_DEVICE, 0, 1, stream_), XFER_ERROR_INVALID_HANDLE,
                          {"buffer"});
        EXPECT_TRUE(yields_null([&] { return xfer_host_ptr(buffer); }, {"buffer"}));
        EXPECT_XFER_FAILS(xfer_stream_synchronize(stream), XFER_ERROR_INVALID_HANDLE, {"stream"});
        EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 0, 1, stream), XFER_ERROR_INVALID_HANDLE, {"stream"});
        EXPECT_XFER_FAILS(xfer_event_query(event), XFER_ERROR_INVALID_HANDLE, {"event"});
        EXPECT_XFER_FAILS(xfer_alloc(context, 64, 0, &out), XFER_ERROR_INVALID_HANDLE, {"context"});
        EXPECT_XFER_FAILS(xfer_close(context), XFER_ERROR_INVALID_HANDLE, {"context"});
    }
    expect_state_intact();
}

TEST_P(BadHandles, HandleOfTheWrongKind) {
    // A live stream handle passed where a buffer, event or context belongs, and so on.
    auto stream_as_buffer = reinterpret_cast<xfer_buffer>(stream_);
    auto buffer_as_stream = reinterpret_cast<xfer_stream>(buf_);
    auto buffer_as_event = reinterpret_cast<xfer_event>(buf_);
    auto event_as_context = reinterpret_cast<xfer_context>(event_);
    xfer_buffer out = nullptr;
    EXPECT_XFER_FAILS(xfer_free(stream_as_buffer), XFER_ERROR_INVALID_HANDLE, {"buffer"});
    EXPECT_XFER_FAILS(xfer_stream_destroy(buffer_as_stream), XFER_ERROR_INVALID_HANDLE, {"stream"});
    EXPECT_XFER_FAILS(xfer_event_destroy(buffer_as_event), XFER_ERROR_INVALID_HANDLE, {"event"});
    EXPECT_XFER_FAILS(xfer_alloc(event_as_context, 64, 0, &out), XFER_ERROR_INVALID_HANDLE, {"context"});
    expect_state_intact();
}

TEST_P(BadHandles, ObjectsOfAnotherContext) {
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &other));
    xfer_stream foreign_stream = nullptr;
    xfer_event foreign_event = nullptr;
    xfer_buffer foreign_buffer = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(other, &foreign_stream));
    ASSERT_XFER_OK(xfer_event_create(other, 0, &foreign_event));
    ASSERT_XFER_OK(xfer_alloc(other, kBytes, 0, &foreign_buffer));
    int dst = 0, src = 1;
    float ms = -1.0f;
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 0, kBytes, foreign_stream), XFER_ERROR_INVALID_HANDLE,
                      {"another context"});
    EXPECT_XFER_FAILS(xfer_copy_async(foreign_buffer, XFER_TO_DEVICE, 0, kBytes, stream_), XFER_ERROR_INVALID_HANDLE,
                      {"another context"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, &dst, &src, sizeof dst, XFER_COPY_HOST_TO_HOST, foreign_stream),
                      XFER_ERROR_INVALID_HANDLE, {"another context"});
    EXPECT_XFER_FAILS(xfer_event_record(event_, foreign_stream), XFER_ERROR_INVALID_HANDLE, {"another context"});
    EXPECT_XFER_FAILS(xfer_event_record(foreign_event, stream_), XFER_ERROR_INVALID_HANDLE, {"another context"});
    EXPECT_XFER_FAILS(xfer_stream_wait_event(stream_, foreign_event), XFER_ERROR_INVALID_HANDLE, {"another context"});
    ASSERT_XFER_OK(xfer_event_record(event_, stream_));
    ASSERT_XFER_OK(xfer_event_record(foreign_event, foreign_stream));
    ASSERT_XFER_OK(xfer_event_synchronize(event_));
    ASSERT_XFER_OK(xfer_event_synchronize(foreign_event));
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(event_, foreign_event, &ms), XFER_ERROR_INVALID_HANDLE,
                      {"another context"});
    EXPECT_EQ(ms, -1.0f);
    EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(dst, 0) << "a rejected copy must not run";
    // Both contexts keep working. (round_trip() works on ctx_, so the other context's buffer
    // goes there and back with its own stream and xfer_copy.)
    const Bytes data = random_bytes(kBytes, 602);
    write_host(foreign_buffer, 0, data);
    EXPECT_XFER_OK(xfer_copy_async(foreign_buffer, XFER_TO_DEVICE, 0, kBytes, foreign_stream));
    EXPECT_XFER_OK(xfer_stream_synchronize(foreign_stream));
    if (!shared_view()) {
        write_host(foreign_buffer, 0, Bytes(kBytes, 0xa5));
    }
    EXPECT_XFER_OK(xfer_copy(foreign_buffer, XFER_TO_HOST, 0, kBytes));
    EXPECT_TRUE(same_bytes(data, read_host(foreign_buffer, 0, kBytes)));
    EXPECT_XFER_OK(xfer_close(other));
    expect_state_intact();
}

XFER_CONTRACT_SUITE(BadHandles);

} // namespace
} // namespace xfer::test::contract

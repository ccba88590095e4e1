// SPDX-License-Identifier: Apache-2.0
// Handle validation through the C API: NULL, garbage, freed, wrong-kind and foreign handles
// give XFER_ERROR_INVALID_HANDLE with a message, never a crash, and never reach the backend.
#include "test_support.hpp"

using namespace xfer::test;

namespace {

class Handles : public CoreTest {
  protected:
    void SetUp() override {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
        ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 64, 0, &buf));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &stream));
        ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &event));
    }
    void TearDown() override {
        if (ctx != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    }

    // A second buffer, stream and event of ctx, for tests that release them.
    struct Others {
        xfer_buffer buf = nullptr;
        xfer_stream stream = nullptr;
        xfer_event event = nullptr;
    };
    void create_others(Others *o) {
        ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 8, 0, &o->buf));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &o->stream));
        ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &o->event));
    }
    void release_others(const Others &o) {
        ASSERT_XFER(XFER_SUCCESS, xfer_free(o.buf));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_destroy(o.stream));
        ASSERT_XFER(XFER_SUCCESS, xfer_event_destroy(o.event));
    }

    // Calls every entry point that takes a buffer/stream/event/context with the given bad
    // handles and checks each answer; the backend must not be called at all.
    void expect_all_rejected(xfer_context bad_ctx, xfer_buffer bad_buf, xfer_stream bad_stream, xfer_event bad_event) {
        long calls = mockfull_calls();
        char bytes[8] = {0};
        float ms = 0;
        xfer_buffer out_buf = nullptr;
        xfer_stream out_stream = nullptr;
        xfer_event out_event = nullptr;
        xfer_context_info cinfo{};
        xfer_device_info dinfo{};
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_alloc(bad_ctx, 16, 0, &out_buf));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_get_info(bad_ctx, &cinfo));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_device_get_info(bad_ctx, &dinfo));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_create(bad_ctx, &out_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_create(bad_ctx, 0, &out_event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE,
                    xfer_memcpy_async(bad_ctx, bytes, bytes + 4, 4, XFER_COPY_HOST_TO_HOST, stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(bad_buf));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_copy(bad_buf, XFER_TO_DEVICE, 0, 8));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_copy_async(bad_buf, XFER_TO_DEVICE, 0, 8, stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_copy_async(buf, XFER_TO_DEVICE, 0, 8, bad_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_destroy(bad_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_synchronize(bad_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_query(bad_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_wait_event(bad_stream, event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_wait_event(stream, bad_event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_launch_host_func(
                                                   bad_stream, [](void *) {}, nullptr));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_destroy(bad_event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_record(bad_event, stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_record(event, bad_stream));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_synchronize(bad_event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_query(bad_event));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_elapsed_ms(bad_event, event, &ms));
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_elapsed_ms(event, bad_event, &ms));
        EXPECT_EQ(xfer_host_ptr(bad_buf), nullptr);
        EXPECT_EQ(xfer_device_ptr(bad_buf), nullptr);
        EXPECT_EQ(xfer_buffer_size(bad_buf), 0u);
        EXPECT_EQ(xfer_stream_native(bad_stream), nullptr);
        EXPECT_NE(std::string(xfer_last_error()), "");
        EXPECT_EQ(out_buf, nullptr);
        EXPECT_EQ(out_stream, nullptr);
        EXPECT_EQ(out_event, nullptr);
        EXPECT_EQ(mockfull_calls(), calls) << "the backend was called with an invalid handle";
    }

    xfer_context ctx = nullptr;
    xfer_buffer buf = nullptr;
    xfer_stream stream = nullptr;
    xfer_event event = nullptr;
};

TEST_F(Handles, NullHandles) {
    expect_all_rejected(nullptr, nullptr, nullptr, nullptr);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_close(nullptr));
    EXPECT_STREQ(xfer_last_error(), "xfer_close: ctx is NULL (expected a context handle)");
}

TEST_F(Handles, GarbagePointerValues) {
    expect_all_rejected(reinterpret_cast<xfer_context>(0x1234), reinterpret_cast<xfer_buffer>(0x1234),
                        reinterpret_cast<xfer_stream>(0x1234), reinterpret_cast<xfer_event>(0x1234));
    int local = 0;
    expect_all_rejected(reinterpret_cast<xfer_context>(&local), reinterpret_cast<xfer_buffer>(&local),
                        reinterpret_cast<xfer_stream>(~std::uintptr_t(0)), reinterpret_cast<xfer_event>(0xdeadbeef));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(reinterpret_cast<xfer_buffer>(0x1234)));
    EXPECT_NE(std::string(xfer_last_error()).find("is not an xfer buffer handle"), std::string::npos)
        << xfer_last_error();
}

TEST_F(Handles, WrongKindHandles) {
    expect_all_rejected(reinterpret_cast<xfer_context>(buf), reinterpret_cast<xfer_buffer>(stream),
                        reinterpret_cast<xfer_stream>(event), reinterpret_cast<xfer_event>(ctx));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(reinterpret_cast<xfer_buffer>(stream)));
    EXPECT_NE(std::string(xfer_last_error()).find("is a stream handle, not a buffer"), std::string::npos)
        << xfer_last_error();
    // Still alive and usable afterwards.
    EXPECT_EQ(xfer_buffer_size(buf), 64u);
}

TEST_F(Handles, FreedHandles) {
    Others o;
    ASSERT_NO_FATAL_FAILURE(create_others(&o));
    ASSERT_NO_FATAL_FAILURE(release_others(o));
    expect_all_rejected(nullptr, o.buf, o.stream, o.event);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(o.buf));
    EXPECT_NE(std::string(xfer_last_error()).find("not a live buffer"), std::string::npos) << xfer_last_error();
}

// Handles used by this thread just before their release (so that its recent lookups hold them,
// objects.hpp) are refused after it, with the message of a freed handle, never served stale.
TEST_F(Handles, HandlesUsedJustBeforeTheirReleaseAreRefusedAfterIt) {
    Others o;
    ASSERT_NO_FATAL_FAILURE(create_others(&o));
    for (int i = 0; i < 3; ++i) {
        ASSERT_XFER(XFER_SUCCESS, xfer_copy_async(o.buf, XFER_TO_DEVICE, 0, 8, o.stream));
        ASSERT_XFER(XFER_SUCCESS, xfer_event_record(o.event, o.stream));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_synchronize(o.stream));
    }
    ASSERT_NO_FATAL_FAILURE(release_others(o));
    expect_all_rejected(nullptr, o.buf, o.stream, o.event);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_synchronize(o.stream));
    EXPECT_NE(std::string(xfer_last_error()).find("not a live stream"), std::string::npos) << xfer_last_error();
    // And a context used just before xfer_close.
    xfer_context c2 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &c2));
    xfer_context_info info{};
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_info(c2, &info));
    ASSERT_XFER(XFER_SUCCESS, xfer_close(c2));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_get_info(c2, &info));
    EXPECT_NE(std::string(xfer_last_error()).find("not a live context"), std::string::npos) << xfer_last_error();
}

TEST_F(Handles, FreedHandleStaysInvalidWhenItsSlotIsReused) {
    xfer_buffer old_buf = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 8, 0, &old_buf));
    ASSERT_XFER(XFER_SUCCESS, xfer_free(old_buf));
    xfer_buffer new_buf = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 16, 0, &new_buf));
    EXPECT_NE(old_buf, new_buf);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(old_buf));
    EXPECT_EQ(xfer_buffer_size(new_buf), 16u); // the double free did not touch the new buffer
    EXPECT_XFER(XFER_SUCCESS, xfer_free(new_buf));
}

TEST_F(Handles, HandlesOfAClosedContext) {
    xfer_context old_ctx = ctx;
    xfer_buffer old_buf = buf;
    xfer_stream old_stream = stream;
    xfer_event old_event = event;
    ASSERT_XFER(XFER_SUCCESS, xfer_close(ctx));
    ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_close(old_ctx));
    // A fresh context for the arguments that must be valid in expect_all_rejected.
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 64, 0, &buf));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &event));
    expect_all_rejected(old_ctx, old_buf, old_stream, old_event);
}

TEST_F(Handles, ObjectsOfAnotherContextAreRefused) {
    xfer_context other = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 1, &other));
    xfer_stream other_stream = nullptr;
    xfer_event other_event = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(other, &other_stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(other, 0, &other_event));
    long calls = mockfull_calls();
    char bytes[8] = {0};
    float ms = 0;
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_copy_async(buf, XFER_TO_DEVICE, 0, 8, other_stream));
    EXPECT_NE(std::string(xfer_last_error()).find("belongs to another context"), std::string::npos)
        << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE,
                xfer_memcpy_async(ctx, bytes, bytes + 4, 4, XFER_COPY_HOST_TO_HOST, other_stream));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_wait_event(stream, other_event));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_record(event, other_stream));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_elapsed_ms(event, other_event, &ms));
    EXPECT_NE(std::string(xfer_last_error()).find("belongs to another context"), std::string::npos)
        << xfer_last_error();
    EXPECT_EQ(mockfull_calls(), calls);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(other));
}

} // namespace

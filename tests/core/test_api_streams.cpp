// SPDX-License-Identifier: Apache-2.0
// Streams through the core: lifecycle, queries, host functions, optional entries.
#include <cstring>
#include <string>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

class Streams : public CoreTest {
  protected:
    void open(const char *backend) { ASSERT_XFER(XFER_SUCCESS, xfer_open(backend, 0, &ctx)); }
    void TearDown() override {
        if (ctx != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    }
    xfer_context ctx = nullptr;
};

TEST_F(Streams, CreateSynchronizeQueryDestroy) {
    open("mockfull");
    long live = mockfull_live();
    xfer_stream s = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_stream_create(ctx, nullptr));
    EXPECT_STREQ(xfer_last_error(), "xfer_stream_create: s is NULL");
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &s));
    EXPECT_EQ(mockfull_live(), live + 1);
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_synchronize(s));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_query(s));
    EXPECT_NE(xfer_stream_native(s), nullptr);
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
    EXPECT_EQ(mockfull_live(), live);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_destroy(s));
}

TEST_F(Streams, DistinctStreamsHaveDistinctNativeHandles) {
    open("mockfull");
    xfer_stream a = nullptr, b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &a));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &b));
    EXPECT_NE(a, b);
    EXPECT_NE(xfer_stream_native(a), xfer_stream_native(b));
}

TEST_F(Streams, QueryReportsNotReadyWithAMessage) {
    EnvGuard busy("XFER_MOCKFULL_BUSY", "true");
    open("mockfull");
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &s));
    EXPECT_XFER(XFER_ERROR_NOT_READY, xfer_stream_query(s));
    EXPECT_NE(std::string(xfer_last_error()).find("not finished"), std::string::npos);
}

TEST_F(Streams, HostFunctionRunsWithItsArgument) {
    open("mockfull");
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &s));
    int value = 0;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_launch_host_func(
                                  s, [](void *p) { *static_cast<int *>(p) = 42; }, &value));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_synchronize(s));
    EXPECT_EQ(value, 42);
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_stream_launch_host_func(s, nullptr, &value));
    EXPECT_STREQ(xfer_last_error(), "xfer_stream_launch_host_func: fn is NULL");
}

TEST_F(Streams, MinimalBackendAnswersNotSupportedForOptionalEntries) {
    open("mock");
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &s));
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_stream_query(s));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_stream_query");
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_stream_launch_host_func(
                                              s, [](void *) {}, nullptr));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_stream_launch_host_func");
    EXPECT_EQ(xfer_stream_native(s), nullptr);
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_stream_native");
    xfer_event e = nullptr;
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_event_create(ctx, 0, &e));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_event_create");
    EXPECT_EQ(e, nullptr);
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_synchronize(s));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
}

TEST_F(Streams, WaitEventOrdersAcrossStreams) {
    open("mockfull");
    xfer_stream a = nullptr, b = nullptr;
    xfer_event e = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &a));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, XFER_EVENT_DISABLE_TIMING, &e));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_wait_event(b, e)); // never recorded: a no-op
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(e, a));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_wait_event(b, e));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_synchronize(b));
}

} // namespace

// xfer_stream_wrap: the application's own stream, used as one of xfer's and handed back (never
// destroyed) when the wrapper goes, by xfer_stream_destroy or by xfer_close.
namespace {

TEST_F(Streams, WrappedStreamWorksAsAnOwnOneAndIsNeverDestroyed) {
    open("mockfull");
    const long live = mockfull_live();
    // The application's stream: memory the core must never free (ASan would catch it).
    static unsigned char application_stream[16];
    xfer_stream s = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_stream_wrap(ctx, application_stream, nullptr));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(ctx, application_stream, &s));
    EXPECT_EQ(mockfull_live(), live + 1);
    EXPECT_EQ(xfer_stream_native(s), static_cast<void *>(application_stream));
    unsigned char src[64], dst[64] = {};
    for (int i = 0; i < 64; ++i) src[i] = static_cast<unsigned char>(i * 7);
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_async(ctx, dst, src, sizeof src, XFER_COPY_HOST_TO_HOST, s));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_synchronize(s));
    EXPECT_EQ(std::memcmp(src, dst, sizeof src), 0);
    xfer_event e = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &e));
    EXPECT_XFER(XFER_SUCCESS, xfer_event_record(e, s));
    EXPECT_NE(xfer_event_native(e), nullptr);
    EXPECT_XFER(XFER_SUCCESS, xfer_event_destroy(e));
    EXPECT_EQ(xfer_event_native(e), nullptr);
    EXPECT_NE(std::string(xfer_last_error()).find("xfer_event_native"), std::string::npos) << xfer_last_error();
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
    EXPECT_EQ(mockfull_live(), live) << "the wrapper was not released";
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_synchronize(s));
    // The same stream can be wrapped again once its wrapper is gone.
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(ctx, application_stream, &s));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
}

TEST_F(Streams, NullIsTheDefaultStreamAndNeverANullNativeHandle) {
    open("mockfull");
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(ctx, nullptr, &s));
    EXPECT_NE(xfer_stream_native(s), nullptr);
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
}

TEST_F(Streams, OneNativeStreamIsOneStreamOfAContext) {
    open("mockfull");
    static unsigned char application_stream[16];
    xfer_stream first = nullptr, second = nullptr, own = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(ctx, application_stream, &first));
    const long live = mockfull_live();
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_stream_wrap(ctx, application_stream, &second));
    EXPECT_NE(std::string(xfer_last_error()).find("already is stream"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(second, nullptr);
    EXPECT_EQ(mockfull_live(), live) << "the refused wrapper was not released";
    // A stream xfer created cannot be wrapped a second time through its native handle either.
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &own));
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_stream_wrap(ctx, xfer_stream_native(own), &second));
    EXPECT_NE(std::string(xfer_last_error()).find("xfer_stream_create"), std::string::npos) << xfer_last_error();
    // Another context may wrap it: each context has its own view of its streams.
    xfer_context other = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &other));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(other, application_stream, &second));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(other));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(first));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(own));
}

TEST_F(Streams, CloseUnwrapsWhatIsLeft) {
    static unsigned char application_stream[16];
    const long before = mockfull_live();
    open("mockfull");
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_wrap(ctx, application_stream, &s));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    ctx = nullptr;
    EXPECT_EQ(mockfull_live(), before);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_destroy(s));
}

TEST_F(Streams, BackendsWithoutWrappingAnswerNotSupported) {
    open("mock");
    static unsigned char application_stream[16];
    xfer_stream s = nullptr;
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_stream_wrap(ctx, application_stream, &s));
    EXPECT_EQ(s, nullptr);
}

} // namespace

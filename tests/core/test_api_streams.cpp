// SPDX-License-Identifier: Apache-2.0
// Streams through the core: lifecycle, queries, host functions, optional entries.
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

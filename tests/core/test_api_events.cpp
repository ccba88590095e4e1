// SPDX-License-Identifier: Apache-2.0
// Events through the core: flags, recording state, elapsed-time rules.
#include "test_support.hpp"

using namespace xfer::test;

namespace {

class Events : public CoreTest {
  protected:
    void SetUp() override { open(); }
    void open() {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &stream));
    }
    void TearDown() override {
        if (ctx != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    }
    xfer_context ctx = nullptr;
    xfer_stream stream = nullptr;
};

TEST_F(Events, CreateValidatesOutputAndFlags) {
    xfer_event e = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_event_create(ctx, 0, nullptr));
    EXPECT_STREQ(xfer_last_error(), "xfer_event_create: e is NULL");
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_event_create(ctx, 0x6, &e));
    EXPECT_NE(std::string(xfer_last_error()).find("unknown bits 0x6"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(e, nullptr);
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, XFER_EVENT_DISABLE_TIMING, &e));
    EXPECT_XFER(XFER_SUCCESS, xfer_event_destroy(e));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_destroy(e));
}

TEST_F(Events, ElapsedBetweenTwoRecordedEvents) {
    xfer_event start = nullptr, end = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &start));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &end));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(start, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(end, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_synchronize(end));
    EXPECT_XFER(XFER_SUCCESS, xfer_event_query(end));
    float ms = -1.0f;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_elapsed_ms(start, end, &ms));
    EXPECT_GE(ms, 0.0f);
    float same = -1.0f;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_elapsed_ms(start, start, &same));
    EXPECT_EQ(same, 0.0f);
}

TEST_F(Events, ElapsedRefusesNeverRecordedAndUntimedEvents) {
    xfer_event recorded = nullptr, never = nullptr, untimed = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &recorded));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &never));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, XFER_EVENT_DISABLE_TIMING, &untimed));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(recorded, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(untimed, stream));
    long calls = mockfull_calls();
    float ms = 123.0f;
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_event_elapsed_ms(recorded, never, &ms));
    EXPECT_STREQ(xfer_last_error(), "xfer_event_elapsed_ms: end was never recorded");
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_event_elapsed_ms(never, recorded, &ms));
    EXPECT_STREQ(xfer_last_error(), "xfer_event_elapsed_ms: start was never recorded");
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_event_elapsed_ms(untimed, recorded, &ms));
    EXPECT_STREQ(xfer_last_error(), "xfer_event_elapsed_ms: start was created with XFER_EVENT_DISABLE_TIMING");
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_event_elapsed_ms(recorded, recorded, nullptr));
    EXPECT_EQ(ms, 123.0f);
    EXPECT_EQ(mockfull_calls(), calls);
    // A never-recorded event counts as complete.
    EXPECT_XFER(XFER_SUCCESS, xfer_event_synchronize(never));
    EXPECT_XFER(XFER_SUCCESS, xfer_event_query(never));
}

TEST_F(Events, NotReadyIsReportedAndOutputUntouched) {
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    ctx = nullptr;
    EnvGuard busy("XFER_MOCKFULL_BUSY", "on");
    open();
    xfer_event a = nullptr, b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &a));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(ctx, 0, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(a, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_record(b, stream));
    EXPECT_XFER(XFER_ERROR_NOT_READY, xfer_event_query(b));
    float ms = 7.0f;
    EXPECT_XFER(XFER_ERROR_NOT_READY, xfer_event_elapsed_ms(a, b, &ms));
    EXPECT_EQ(ms, 7.0f);
}

} // namespace

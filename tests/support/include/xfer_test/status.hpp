// SPDX-License-Identifier: Apache-2.0
// Status assertions: on a mismatch they print the call and xfer_last_error(), so a failing
// test says what the library said.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include <xfer/xfer.h>

// The call returned XFER_SUCCESS.
#define EXPECT_XFER_OK(call) EXPECT_EQ((call), XFER_SUCCESS) << #call << ": " << xfer_last_error()
#define ASSERT_XFER_OK(call) ASSERT_EQ((call), XFER_SUCCESS) << #call << ": " << xfer_last_error()

// The call returned `expected`; statuses are compared (and printed) by name.
#define EXPECT_XFER(expected, call) XFER_TEST_STATUS_IS_(EXPECT_EQ, expected, call)
#define ASSERT_XFER(expected, call) XFER_TEST_STATUS_IS_(ASSERT_EQ, expected, call)
#define XFER_TEST_STATUS_IS_(check_eq, expected, call)                                                                 \
    do {                                                                                                               \
        xfer_status xfer_test_st_ = (call);                                                                            \
        check_eq(xfer_status_string(expected), std::string(xfer_status_string(xfer_test_st_)))                         \
            << #call << ": " << xfer_last_error();                                                                     \
    } while (0)

// SPDX-License-Identifier: Apache-2.0
// Proves which backends the suite ran on. On the GPU machine CI sets
// XFER_TEST_BACKENDS=host,pageable,pinned,managed,zerocopy: a backend that failed to load must
// fail the run here instead of silently shrinking the suite.
#include <algorithm>

#include <gtest/gtest.h>

#include "contract_backends.hpp"
#include <xfer/xfer.h>

namespace xfer::test::contract {
namespace {

TEST(BackendSelection, EveryRequestedBackendIsAvailable) {
    const auto &selected = backends_under_test();
    for (const std::string &name : requested_backends()) {
        const bool selected_for_test = std::find(selected.begin(), selected.end(), name) != selected.end();
        EXPECT_TRUE(selected_for_test) << "XFER_TEST_BACKENDS names '" << name
                                       << "', which is not available here. Found:\n"
                                       << describe_found_backends();
    }
}

TEST(BackendSelection, AtLeastOneBackendIsUnderTest) {
    int count = -1;
    ASSERT_EQ(xfer_backend_count(&count), XFER_SUCCESS) << xfer_last_error();
    EXPECT_FALSE(backends_under_test().empty()) << "no available backend to test. Found:\n"
                                                << describe_found_backends();
}

TEST(BackendSelection, EveryBackendUnderTestIsListedAsAvailable) {
    int count = 0;
    ASSERT_EQ(xfer_backend_count(&count), XFER_SUCCESS) << xfer_last_error();
    for (const std::string &name : backends_under_test()) {
        bool listed = false;
        for (int i = 0; i < count; ++i) {
            xfer_backend_info info{};
            ASSERT_EQ(xfer_backend_get_info(i, &info), XFER_SUCCESS) << xfer_last_error();
            if (name != info.name) {
                continue;
            }
            listed = true;
            EXPECT_EQ(info.available, 1);
            EXPECT_STREQ(info.reason, "");
            EXPECT_GE(info.device_count, 1);
            EXPECT_EQ(info.abi_major, 1u);
            EXPECT_STRNE(info.description, "");
            EXPECT_STRNE(info.path, "");
        }
        EXPECT_TRUE(listed) << name;
    }
}

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Without a usable GPU (no driver, or CUDA_VISIBLE_DEVICES= hiding every device, as the ctest
// entry cuda_no_device does) each CUDA backend is listed as unavailable with the reason, xfer_open
// refuses it with that reason, the host backend keeps working, and nothing prints or crashes.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "plugin_loader.hpp"
#include "test_support.hpp"

namespace {

using namespace xfer::test;

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// These tests assert the no-device behaviour, so they need a machine (or an environment)
// where the CUDA runtime sees no device.
#define XFER_REQUIRE_NO_CUDA_DEVICE()                                                                                  \
    do {                                                                                                               \
        if (gpu_presence().available) {                                                                                \
            GTEST_SKIP() << "a CUDA device is visible; run with CUDA_VISIBLE_DEVICES= (ctest entry "                   \
                            "cuda_no_device) to test the no-device behaviour";                                         \
        }                                                                                                              \
    } while (0)

class NoDevice : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        XFER_REQUIRE_NO_CUDA_DEVICE();
        // The choice of backend must come from the test, not from the caller's environment.
        unsetenv("XFER_BACKEND");
        unsetenv("XFER_CONFIG");
        unsetenv("XFER_DEVICE");
    }
};

TEST_P(NoDevice, PluginProbeSaysWhy) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    reset_captured_error();
    int count = -7;
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const xfer_status st = plugin.table->probe(&count);
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, st) << captured_error().message;
    EXPECT_EQ(-7, count) << "device_count written on failure";
    EXPECT_EQ(1, captured_error().calls);
    EXPECT_EQ(st, captured_error().status);
    EXPECT_NE(std::string::npos, lower(captured_error().message).find("cuda")) << captured_error().message;
    EXPECT_EQ("", out);
    EXPECT_EQ("", err);
}

TEST_P(NoDevice, PluginContextCreateFailsCleanly) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    reset_captured_error();
    void *sentinel = reinterpret_cast<void *>(0x5678);
    void *ctx = sentinel;
    const xfer_status st = plugin.table->context_create(0, nullptr, 0, &ctx);
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, st) << captured_error().message;
    EXPECT_EQ(sentinel, ctx);
    EXPECT_NE(std::string::npos, captured_error().message.find("cudaSetDevice(0)")) << captured_error().message;
}

TEST_P(NoDevice, ListedAsUnavailableWithTheReason) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    reset_captured_error();
    int count = 0;
    plugin.table->probe(&count);
    const std::string probe_reason = captured_error().message;
    ASSERT_FALSE(probe_reason.empty());

    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    xfer_backend_info info{};
    const int index = find_backend(GetParam(), &info);
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_GE(index, 0) << "backend " << GetParam() << " not listed; last error: " << xfer_last_error();
    EXPECT_EQ(0, info.available);
    ASSERT_NE(nullptr, info.reason);
    EXPECT_STREQ(probe_reason.c_str(), info.reason);
    EXPECT_EQ(0, info.device_count);
    EXPECT_EQ(unsigned{XFER_BACKEND_ABI_MAJOR}, info.abi_major);
    EXPECT_EQ(XFER_DEVICE_KIND_CUDA, info.device_kind);
    EXPECT_EQ("", out);
    EXPECT_EQ("", err);
}

TEST_P(NoDevice, OpenIsRefusedWithTheReason) {
    xfer_backend_info info{};
    ASSERT_GE(find_backend(GetParam(), &info), 0) << xfer_last_error();
    ASSERT_NE(nullptr, info.reason);
    const std::string reason = info.reason;

    xfer_context sentinel = reinterpret_cast<xfer_context>(0x9abc);
    xfer_context ctx = sentinel;
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const xfer_status st = xfer_open(GetParam().c_str(), 0, &ctx);
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(st == XFER_ERROR_NO_DEVICE || st == XFER_ERROR_BACKEND_UNAVAILABLE) << xfer_status_string(st);
    EXPECT_EQ(sentinel, ctx) << "ctx written on failure";
    EXPECT_NE(nullptr, std::strstr(xfer_last_error(), reason.c_str()))
        << "last error '" << xfer_last_error() << "' does not carry the reason '" << reason << "'";
    EXPECT_EQ("", out);
    EXPECT_EQ("", err);
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, NoDevice, ::testing::ValuesIn(kCudaBackends), param_name);

// The other backends keep working: with every CUDA backend unavailable, the host backend
// still opens, and an unnamed xfer_open falls through to it.
TEST(NoDeviceHost, HostBackendStillWorks) {
    XFER_REQUIRE_NO_CUDA_DEVICE();
    unsetenv("XFER_BACKEND");
    unsetenv("XFER_CONFIG");
    unsetenv("XFER_DEVICE");
    xfer_backend_info info{};
    ASSERT_GE(find_backend("host", &info), 0) << "the host backend is part of every build: " << xfer_last_error();
    ASSERT_EQ(1, info.available) << info.reason;

    ContextGuard guard;
    ASSERT_XFER_OK(xfer_open(nullptr, -1, &guard.ctx));
    xfer_context_info ci{};
    ASSERT_XFER_OK(xfer_context_get_info(guard.ctx, &ci));
    EXPECT_STREQ("host", ci.backend);

    const auto data = random_bytes(4096, fresh_seed());
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(guard.ctx, data.size(), XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), data.size());
    ASSERT_XFER_OK(xfer_copy(buf, XFER_TO_DEVICE, 0, data.size()));
    std::memset(xfer_host_ptr(buf), 0, data.size());
    ASSERT_XFER_OK(xfer_copy(buf, XFER_TO_HOST, 0, data.size()));
    EXPECT_EQ(0, std::memcmp(data.data(), xfer_host_ptr(buf), data.size()));
    EXPECT_XFER_OK(xfer_free(buf));
}

} // namespace

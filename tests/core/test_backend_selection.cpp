// SPDX-License-Identifier: Apache-2.0
// Which backend and device xfer_open picks: argument, XFER_BACKEND, config file, default order.
#include <algorithm>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

class BackendSelection : public CoreTest {
  protected:
    // The backend name of a freshly opened context (closed again), or "" with the failure.
    std::string opened_backend(const char *backend = nullptr, int device = -1, int *device_out = nullptr) {
        xfer_context ctx = nullptr;
        xfer_status st = xfer_open(backend, device, &ctx);
        if (st != XFER_SUCCESS) {
            ADD_FAILURE() << xfer_status_string(st) << ": " << xfer_last_error();
            return "";
        }
        xfer_context_info info{};
        EXPECT_XFER(XFER_SUCCESS, xfer_context_get_info(ctx, &info));
        std::string name = info.backend;
        if (device_out != nullptr) *device_out = info.device;
        EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
        return name;
    }
};

TEST_F(BackendSelection, ExplicitNameIsUsed) {
    EXPECT_EQ(opened_backend("mockfull", 0), "mockfull");
    EXPECT_EQ(opened_backend("mock", 0), "mock");
}

TEST_F(BackendSelection, XferBackendEnvSelectsForNull) {
    EnvGuard backend("XFER_BACKEND", "mockfull");
    EXPECT_EQ(opened_backend(), "mockfull");
}

TEST_F(BackendSelection, ExplicitNameBeatsEnvironment) {
    EnvGuard backend("XFER_BACKEND", "mockfull");
    EXPECT_EQ(opened_backend("mock", 0), "mock");
}

TEST_F(BackendSelection, ConfigFileSelectsForNull) {
    TempFile conf("backend = mockfull\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    EXPECT_EQ(opened_backend(), "mockfull");
}

TEST_F(BackendSelection, EnvironmentBeatsConfigFile) {
    TempFile conf("backend = mockfull\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    EnvGuard backend("XFER_BACKEND", "mock");
    EXPECT_EQ(opened_backend(), "mock");
}

TEST_F(BackendSelection, UnknownNameIsBackendNotFoundNamingIt) {
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open("warp_drive", 0, &ctx));
    EXPECT_EQ(ctx, nullptr);
    std::string m = xfer_last_error();
    EXPECT_NE(m.find("'warp_drive'"), std::string::npos) << m;
    EXPECT_NE(m.find(plugin_dir("good")), std::string::npos) << m; // where it looked
    EnvGuard backend("XFER_BACKEND", "warp_drive");
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open(nullptr, 0, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("'warp_drive'"), std::string::npos);
}

TEST_F(BackendSelection, DefaultIsFirstAvailableOfThePreferredOrder) {
    // fallback/ holds unavailable pinned, pageable, managed, zerocopy and an available host;
    // being searched first, and allowed to replace the built-in backends of those names
    // (XFER_PLUGIN_OVERRIDE), they shadow the real plugins.
    EnvGuard override_builtin("XFER_PLUGIN_OVERRIDE", "1");
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"fallback", "good"}));
    EXPECT_EQ(opened_backend(), "host");
}

TEST_F(BackendSelection, DefaultWithNothingAvailableSaysWhy) {
    // unavailable/ shadows all five preferred names with plugins whose probe fails.
    EnvGuard override_builtin("XFER_PLUGIN_OVERRIDE", "1");
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"unavailable", "good"}));
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open(nullptr, -1, &ctx));
    EXPECT_EQ(ctx, nullptr);
    std::string m = xfer_last_error();
    for (const char *name : {"pinned", "pageable", "managed", "zerocopy", "host"}) {
        EXPECT_NE(m.find(std::string(name) + ": mock '" + name + "': no device"), std::string::npos) << m;
    }
    // A named backend still opens.
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", -1, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(BackendSelection, EmptyNameIsInvalidArgument) {
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_open("", 0, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("empty"), std::string::npos);
}

TEST_F(BackendSelection, NullOutputAndBadDeviceAreInvalidArguments) {
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_open("mock", 0, nullptr));
    EXPECT_NE(std::string(xfer_last_error()).find("ctx is NULL"), std::string::npos);
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_open("mock", -2, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("-2"), std::string::npos);
    EXPECT_EQ(ctx, nullptr);
}

TEST_F(BackendSelection, DeviceOutOfRangeIsNoDeviceWithCounts) {
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_NO_DEVICE, xfer_open("mockfull", 3, &ctx));
    EXPECT_STREQ(xfer_last_error(), "xfer_open: device 3 requested but backend 'mockfull' has 2 device(s)");
    EXPECT_EQ(ctx, nullptr);
}

TEST_F(BackendSelection, DeviceComesFromEnvThenFileThenZero) {
    int device = -1;
    EXPECT_EQ(opened_backend("mockfull", -1, &device), "mockfull");
    EXPECT_EQ(device, 0);
    TempFile conf("device = 1\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    EXPECT_EQ(opened_backend("mockfull", -1, &device), "mockfull");
    EXPECT_EQ(device, 1);
    {
        EnvGuard dev("XFER_DEVICE", "0");
        EXPECT_EQ(opened_backend("mockfull", -1, &device), "mockfull");
        EXPECT_EQ(device, 0);
    }
    EXPECT_EQ(opened_backend("mockfull", 0, &device), "mockfull"); // an explicit index wins
    EXPECT_EQ(device, 0);
    EnvGuard dev("XFER_DEVICE", "5");
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_NO_DEVICE, xfer_open("mockfull", -1, &ctx));
}

TEST_F(BackendSelection, BadDeviceInEnvironmentIsConfigError) {
    EnvGuard dev("XFER_DEVICE", "abc");
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mock", -1, &ctx));
    std::string m = xfer_last_error();
    EXPECT_NE(m.find("XFER_DEVICE"), std::string::npos) << m;
    EXPECT_NE(m.find("'abc'"), std::string::npos) << m;
}

} // namespace

// A listing shows every backend, whatever XFER_BACKEND names: the name only chooses what
// xfer_open(NULL, ...) opens. (Before, the listing held the named backend alone, and nothing
// for a name that matched no backend, with XFER_SUCCESS.)
namespace {

std::vector<std::string> listed_backends() {
    int count = 0;
    EXPECT_XFER(XFER_SUCCESS, xfer_backend_count(&count));
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        EXPECT_XFER(XFER_SUCCESS, xfer_backend_get_info(i, &info));
        names.emplace_back(info.name);
    }
    return names;
}

TEST_F(BackendSelection, ListingShowsEveryBackendWhateverXferBackendNames) {
    const std::vector<std::string> all = listed_backends();
    for (const char *name : {"mock", "mockfull"}) {
        ASSERT_NE(std::find(all.begin(), all.end(), name), all.end()) << name;
    }
    for (const char *named : {"mock", "mockfull", "warp_drive"}) {
        SCOPED_TRACE(named);
        EnvGuard backend("XFER_BACKEND", std::string(named));
        EXPECT_EQ(listed_backends(), all);
        int params = 0;
        EXPECT_XFER(XFER_SUCCESS, xfer_param_count(&params));
        bool mockfull_params = false;
        for (int i = 0; i < params; ++i) {
            xfer_param_info p{};
            ASSERT_XFER(XFER_SUCCESS, xfer_param_get_info(i, &p));
            mockfull_params = mockfull_params || std::string(p.section) == "mockfull";
        }
        EXPECT_TRUE(mockfull_params) << "every found backend's parameters are listed";
    }
    // Opening by default still follows the name, and a name that matches nothing is an error.
    EnvGuard backend("XFER_BACKEND", std::string("warp_drive"));
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open(nullptr, -1, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("warp_drive"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(ctx, nullptr);
}

} // namespace

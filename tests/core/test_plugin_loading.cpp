// SPDX-License-Identifier: Apache-2.0
// Plugin discovery and loading through the C API, with mock plugins of every failure kind.
#include <filesystem>
#include <vector>

#include "test_support.hpp"
#include <xfer/xfer_backend.h>

using namespace xfer::test;

namespace {

class PluginLoading : public CoreTest {};

TEST_F(PluginLoading, GoodPluginsAreListedAvailable) {
    auto mock = find_backend("mock");
    ASSERT_TRUE(mock) << xfer_last_error();
    EXPECT_EQ(mock->available, 1);
    EXPECT_STREQ(mock->reason, "");
    EXPECT_EQ(mock->device_count, 1);
    EXPECT_EQ(mock->abi_major, unsigned(XFER_BACKEND_ABI_MAJOR));
    EXPECT_EQ(mock->abi_minor, unsigned(XFER_BACKEND_ABI_MINOR));
    EXPECT_EQ(mock->device_kind, XFER_DEVICE_KIND_HOST);
    EXPECT_EQ(std::string(mock->path), plugin_dir("good") + "/libxfer-backend-mock.so");
    EXPECT_NE(std::string(mock->description).find("mock backend"), std::string::npos);
    auto full = find_backend("mockfull");
    ASSERT_TRUE(full);
    EXPECT_EQ(full->available, 1);
    EXPECT_EQ(full->device_count, 2);
}

TEST_F(PluginLoading, BackendCountAndInfoValidateArguments) {
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_backend_count(nullptr));
    EXPECT_NE(std::string(xfer_last_error()).find("count is NULL"), std::string::npos);
    int count = 0;
    ASSERT_XFER(XFER_SUCCESS, xfer_backend_count(&count));
    xfer_backend_info info{};
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_backend_get_info(count, &info));
    EXPECT_NE(std::string(xfer_last_error()).find("out of range"), std::string::npos);
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_backend_get_info(-1, &info));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_backend_get_info(0, nullptr));
}

TEST_F(PluginLoading, WrongAbiMajorIsRefusedNamingFileAndBothVersions) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"abi", "good"}));
    auto bad = find_backend("badabi");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->available, 0);
    EXPECT_EQ(bad->abi_major, 2u);
    EXPECT_EQ(bad->abi_minor, 3u);
    std::string reason = bad->reason;
    EXPECT_NE(reason.find("libxfer-backend-badabi.so"), std::string::npos) << reason;
    EXPECT_NE(reason.find("2.3"), std::string::npos) << reason;
    const std::string core_abi = std::to_string(XFER_BACKEND_ABI_MAJOR) + "." + std::to_string(XFER_BACKEND_ABI_MINOR);
    EXPECT_NE(reason.find(core_abi), std::string::npos) << reason;

    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_ABI, xfer_open("badabi", 0, &ctx));
    EXPECT_EQ(ctx, nullptr);
    std::string m = xfer_last_error();
    EXPECT_NE(m.find("libxfer-backend-badabi.so"), std::string::npos) << m;
    EXPECT_NE(m.find("2.3"), std::string::npos) << m;
    EXPECT_NE(m.find(core_abi), std::string::npos) << m;
    // The others still work.
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, TooSmallTableIsRefused) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"small"}));
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_ABI, xfer_open("small", 0, &ctx));
    std::string m = xfer_last_error();
    EXPECT_NE(m.find("libxfer-backend-small.so"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(XFER_BACKEND_TABLE_V1_SIZE - sizeof(void *)) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(XFER_BACKEND_TABLE_V1_SIZE) + " bytes"), std::string::npos) << m;
}

TEST_F(PluginLoading, NewerMinorWithLargerTableLoads) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"newer"}));
    auto newer = find_backend("newer");
    ASSERT_TRUE(newer);
    EXPECT_EQ(newer->available, 1) << newer->reason;
    EXPECT_EQ(newer->abi_minor, 7u);
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("newer", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, OlderMinorVersionLoadsAndItsMissingEntriesAreNotSupported) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"older"}));
    auto older = find_backend("older");
    ASSERT_TRUE(older);
    EXPECT_EQ(older->available, 1) << older->reason;
    EXPECT_EQ(older->abi_minor, 0u);
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("older", 0, &ctx));
    int dummy = 0;
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_register(ctx, &dummy, sizeof dummy, XFER_REGISTER_DEFAULT));
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_unregister(ctx, &dummy));
    xfer_registration_stats stats{};
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_registration_get_stats(ctx, &stats));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, NullRequiredEntryIsRefusedNamingTheEntry) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"noreq"}));
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_ABI, xfer_open("noreq", 0, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("context_create"), std::string::npos) << xfer_last_error();
}

TEST_F(PluginLoading, TableNameDifferentFromFileNameIsRefused) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"misnamed"}));
    auto b = find_backend("misnamed");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->available, 0);
    EXPECT_NE(std::string(b->reason).find("'other'"), std::string::npos) << b->reason;
    xfer_context ctx = nullptr;
    EXPECT_NE(xfer_open("misnamed", 0, &ctx), XFER_SUCCESS);
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open("other", 0, &ctx));
}

TEST_F(PluginLoading, MissingEntrySymbolMakesItUnavailable) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"noentry", "good"}));
    auto b = find_backend("noentry");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->available, 0);
    EXPECT_EQ(b->abi_major, 0u);
    EXPECT_NE(std::string(b->reason).find(XFER_BACKEND_ENTRY_SYMBOL), std::string::npos) << b->reason;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open("noentry", 0, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find(XFER_BACKEND_ENTRY_SYMBOL), std::string::npos);
}

TEST_F(PluginLoading, NotASharedObjectIsUnavailableWithTheLoaderReason) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"junk", "good"}));
    auto junk = find_backend("junk");
    ASSERT_TRUE(junk);
    EXPECT_EQ(junk->available, 0);
    EXPECT_STREQ(junk->description, "");
    std::string reason = junk->reason;
    EXPECT_NE(reason.find("libxfer-backend-junk.so"), std::string::npos) << reason;
    // dlopen's own words, e.g. "invalid ELF header" or "file too short".
    EXPECT_TRUE(reason.find("ELF") != std::string::npos || reason.find("too short") != std::string::npos) << reason;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open("junk", 0, &ctx));
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, FailingProbeMakesItUnavailableWithItsReasonAndOthersWork) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"probefail", "good"}));
    const std::string before = xfer_last_error();
    auto nogpu = find_backend("nogpu");
    ASSERT_TRUE(nogpu);
    // Listing is not a failure: the probe's message must not leak into xfer_last_error().
    EXPECT_EQ(before, xfer_last_error());
    EXPECT_EQ(nogpu->available, 0);
    EXPECT_EQ(nogpu->device_count, 0);
    EXPECT_NE(std::string(nogpu->reason).find("simulated probe failure"), std::string::npos) << nogpu->reason;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_NO_DEVICE, xfer_open("nogpu", 0, &ctx));
    EXPECT_NE(std::string(xfer_last_error()).find("simulated probe failure"), std::string::npos);
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, MissingFolderOnThePathIsSkipped) {
    EnvGuard path("XFER_PLUGIN_PATH", "/nonexistent/xfer-plugins:" + plugin_dir("good"));
    auto mock = find_backend("mock");
    ASSERT_TRUE(mock);
    EXPECT_EQ(mock->available, 1);
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open("nosuchbackend", 0, &ctx));
    std::string m = xfer_last_error();
    EXPECT_NE(m.find("'nosuchbackend'"), std::string::npos) << m;
    EXPECT_NE(m.find("/nonexistent/xfer-plugins (missing)"), std::string::npos) << m;
    EXPECT_NE(m.find(plugin_dir("good")), std::string::npos) << m;
}

TEST_F(PluginLoading, RelativeAndEmptyPathEntriesAreIgnored) {
    // Run from the plugin folder itself: a relative entry would find the plugins if honoured.
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(plugin_dir("good"));
    {
        EnvGuard path("XFER_PLUGIN_PATH", std::string(".::good:") + plugin_dir("abi"));
        EXPECT_FALSE(find_backend("mock"));
        EXPECT_TRUE(find_backend("badabi"));
    }
    std::filesystem::current_path(cwd);
}

TEST_F(PluginLoading, FirstFolderWinsForDuplicateNames) {
    {
        EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"good", "dup"}));
        auto mock = find_backend("mock");
        ASSERT_TRUE(mock);
        EXPECT_EQ(mock->available, 1);
        EXPECT_EQ(std::string(mock->path), plugin_dir("good") + "/libxfer-backend-mock.so");
    }
    {
        EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"dup", "good"}));
        auto mock = find_backend("mock");
        ASSERT_TRUE(mock);
        EXPECT_EQ(mock->available, 0);
        EXPECT_EQ(std::string(mock->path), plugin_dir("dup") + "/libxfer-backend-mock.so");
        int count = 0;
        ASSERT_XFER(XFER_SUCCESS, xfer_backend_count(&count));
        int mocks = 0;
        for (int i = 0; i < count; ++i) {
            xfer_backend_info info{};
            ASSERT_XFER(XFER_SUCCESS, xfer_backend_get_info(i, &info));
            mocks += std::string(info.name) == "mock";
        }
        EXPECT_EQ(mocks, 1);
    }
}

TEST_F(PluginLoading, OpeningANamedBackendOpensNoOtherPluginFile) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"named"}));
    ASSERT_EQ(nullptr, std::getenv("XFER_MOCK_LOADED_marked")) << "an earlier test opened the marked plugin";
    for (const char *how : {"argument", "XFER_BACKEND"}) {
        SCOPED_TRACE(how);
        const bool by_env = std::string(how) == "XFER_BACKEND";
        EnvGuard backend("XFER_BACKEND", by_env ? std::optional<std::string>("mock") : std::nullopt);
        xfer_context ctx = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_open(by_env ? nullptr : "mock", 0, &ctx));
        EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
        EXPECT_EQ(nullptr, std::getenv("XFER_MOCK_LOADED_marked")) << "its constructor ran";
    }
    // A backend that is not there: the message still lists what the search path holds.
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_NOT_FOUND, xfer_open("absent", 0, &ctx));
    const std::string message = xfer_last_error();
    EXPECT_NE(message.find("marked"), std::string::npos) << message;
    EXPECT_EQ(nullptr, std::getenv("XFER_MOCK_LOADED_marked"));
    // Listing the backends opens every file: now the constructor runs.
    auto marked = find_backend("marked");
    ASSERT_TRUE(marked);
    EXPECT_EQ(marked->available, 1);
    EXPECT_STREQ("1", std::getenv("XFER_MOCK_LOADED_marked"));
}

TEST_F(PluginLoading, PluginsThatEndTheProcessWhenOpenedAreRefusedAndTheProcessGoesOn) {
    // Each file is opened in a check process first (xfer-plugin-check): abort() or exit() in a
    // constructor, or a crash in the entry point, ends that process, not this one.
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"ends", "good"}));
    for (const char *name : {"abortctor", "exitctor", "crashentry"}) {
        SCOPED_TRACE(name);
        auto found = find_backend(name);
        ASSERT_TRUE(found);
        EXPECT_EQ(found->available, 0);
        const std::string reason = found->reason;
        EXPECT_NE(reason.find("ends the process that opens it"), std::string::npos) << reason;
        EXPECT_NE(reason.find(std::string("libxfer-backend-") + name + ".so"), std::string::npos) << reason;
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open(name, 0, &ctx));
        EXPECT_EQ(ctx, nullptr);
    }
    EXPECT_NE(std::string(find_backend("abortctor")->reason).find("signal"), std::string::npos);
    EXPECT_NE(std::string(find_backend("exitctor")->reason).find("exited with status 3"), std::string::npos);
    // This process goes on, and so do the good plugins.
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginLoading, AFileWithABuiltinNameElsewhereIsListedButNotUsedUnlessAskedFor) {
    // replace/ holds a "host" plugin; lib/xfer next to libxfer.so holds the built-in one.
    const std::string builtin = std::string(XFER_TEST_BUILTIN_PLUGIN_DIR) + "/libxfer-backend-host.so";
    const std::string stranger = plugin_dir("replace") + "/libxfer-backend-host.so";
    ASSERT_TRUE(std::filesystem::exists(builtin)) << builtin;
    struct Row {
        std::string path, reason;
        int available;
    };
    const auto hosts = [] {
        std::vector<Row> rows;
        int count = 0;
        EXPECT_XFER(XFER_SUCCESS, xfer_backend_count(&count));
        for (int i = 0; i < count; ++i) {
            xfer_backend_info info{};
            EXPECT_XFER(XFER_SUCCESS, xfer_backend_get_info(i, &info));
            if (std::string(info.name) == "host") rows.push_back({info.path, info.reason, info.available});
        }
        return rows;
    };
    ASSERT_EQ(nullptr, std::getenv("XFER_MOCK_LOADED_host")) << "an earlier test opened replace/host";
    {
        EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"replace"}));
        const auto rows = hosts();
        ASSERT_EQ(rows.size(), 2u);
        EXPECT_EQ(rows[0].path, stranger); // listed, saying why it is not used
        EXPECT_EQ(rows[0].available, 0);
        EXPECT_NE(rows[0].reason.find("XFER_PLUGIN_OVERRIDE=1"), std::string::npos) << rows[0].reason;
        EXPECT_NE(rows[0].reason.find("built-in"), std::string::npos) << rows[0].reason;
        EXPECT_EQ(rows[1].path, builtin);
        EXPECT_EQ(rows[1].available, 1);
        xfer_context ctx = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_open("host", 0, &ctx));
        EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
        EXPECT_EQ(nullptr, std::getenv("XFER_MOCK_LOADED_host")) << "the stranger's code ran";
    }
    {
        EnvGuard override_builtin("XFER_PLUGIN_OVERRIDE", "1");
        EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"replace"}));
        const auto rows = hosts();
        ASSERT_EQ(rows.size(), 1u);
        EXPECT_EQ(rows[0].path, stranger);
        EXPECT_EQ(rows[0].available, 1);
        EXPECT_STREQ("1", std::getenv("XFER_MOCK_LOADED_host"));
    }
}

TEST_F(PluginLoading, BackendListFollowsSearchOrder) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"probefail", "good"}));
    int count = 0;
    ASSERT_XFER(XFER_SUCCESS, xfer_backend_count(&count));
    ASSERT_GE(count, 3);
    std::vector<std::string> names;
    for (int i = 0; i < 3; ++i) {
        xfer_backend_info info{};
        ASSERT_XFER(XFER_SUCCESS, xfer_backend_get_info(i, &info));
        names.push_back(info.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"nogpu", "mock", "mockfull"}));
}

TEST_F(PluginLoading, EveryEnumerationProbesAgainButLoadsOnce) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"good"}));
    ASSERT_TRUE(find_backend("mockfull"));
    long calls = mockfull_calls();
    ASSERT_GE(calls, 1);
    ASSERT_TRUE(find_backend("mockfull"));
    EXPECT_EQ(mockfull_calls(), calls + 1); // exactly one more probe
}

} // namespace

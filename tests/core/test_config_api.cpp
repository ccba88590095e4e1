// SPDX-License-Identifier: Apache-2.0
// Configuration through the C API: the parameter listing, file and environment overrides,
// values reaching the backend, and errors that name the key, value and line.
#include <map>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

struct Row {
    std::string section, name, env, type, value, default_value, help;
    xfer_param_source source;
};

// All parameters, keyed "section.name" ("name" for top-level keys).
std::map<std::string, Row> params() {
    std::map<std::string, Row> rows;
    int count = 0;
    xfer_status st = xfer_param_count(&count);
    EXPECT_EQ(st, XFER_SUCCESS) << xfer_last_error();
    for (int i = 0; i < count; ++i) {
        xfer_param_info p{};
        EXPECT_EQ(xfer_param_get_info(i, &p), XFER_SUCCESS) << xfer_last_error();
        std::string key = *p.section ? std::string(p.section) + "." + p.name : std::string(p.name);
        rows[key] = Row{p.section, p.name, p.env, p.type, p.value, p.default_value, p.help, p.source};
    }
    return rows;
}

// The parameters mockfull's context_create received, as it echoes them in the device name.
std::string received_params() {
    xfer_context ctx = nullptr;
    xfer_status st = xfer_open("mockfull", 0, &ctx);
    if (st != XFER_SUCCESS) {
        ADD_FAILURE() << xfer_status_string(st) << ": " << xfer_last_error();
        return "";
    }
    xfer_device_info info{};
    EXPECT_XFER(XFER_SUCCESS, xfer_device_get_info(ctx, &info));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    return info.name;
}

// Runs each configuration-reading entry point and checks they all fail with CONFIG and a
// message containing every one of `parts`. xfer_open names `backend`, the one whose section
// the test gets wrong (opening another backend leaves that plugin closed and its section
// unchecked: test OpeningAnotherBackendLeavesItsSectionUnchecked).
void expect_config_error(std::initializer_list<std::string> parts, const char *backend = "mockfull") {
    int count = 0;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open(backend, 0, &ctx));
    EXPECT_EQ(ctx, nullptr);
    std::string open_message = xfer_last_error();
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_param_count(&count));
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_backend_count(&count));
    for (const std::string &part : parts)
        EXPECT_NE(open_message.find(part), std::string::npos) << open_message << "\nmissing: " << part;
}

class ConfigApi : public CoreTest {};

TEST_F(ConfigApi, ListsTopLevelKeysThenBackendParamsWithDefaults) {
    int count = 0;
    ASSERT_XFER(XFER_SUCCESS, xfer_param_count(&count));
    ASSERT_GE(count, 3 + 6);
    xfer_param_info first{};
    ASSERT_XFER(XFER_SUCCESS, xfer_param_get_info(0, &first));
    EXPECT_STREQ(first.section, "");
    EXPECT_STREQ(first.name, "backend");
    EXPECT_STREQ(first.env, "XFER_BACKEND");

    auto rows = params();
    EXPECT_EQ(rows["device"].value, "0");
    EXPECT_EQ(rows["device"].type, "int");
    EXPECT_EQ(rows["device"].source, XFER_PARAM_DEFAULT);
    EXPECT_EQ(rows["plugin_path"].env, "XFER_PLUGIN_PATH");
    EXPECT_EQ(rows["plugin_path"].source, XFER_PARAM_ENV);
    EXPECT_EQ(rows["plugin_path"].value.rfind(plugin_dir("good"), 0), 0u) << rows["plugin_path"].value;

    const Row &chunk = rows["mockfull.chunk_size"];
    EXPECT_EQ(chunk.section, "mockfull");
    EXPECT_EQ(chunk.env, "XFER_MOCKFULL_CHUNK_SIZE");
    EXPECT_EQ(chunk.type, "size");
    EXPECT_EQ(chunk.value, "8388608");
    EXPECT_EQ(chunk.default_value, "8MiB");
    EXPECT_FALSE(chunk.help.empty());
    EXPECT_EQ(chunk.source, XFER_PARAM_DEFAULT);
    EXPECT_EQ(rows["mockfull.verbose"].value, "0");
    EXPECT_EQ(rows["mockfull.threads"].value, "2");
    EXPECT_EQ(rows.count("mock.chunk_size"), 0u); // the minimal mock declares nothing
}

TEST_F(ConfigApi, DefaultsReachTheBackendInCanonicalForm) {
    EXPECT_EQ(received_params(), "chunk_size=8388608;threads=2;verbose=0;label=plain;fail_silently=0;busy=0");
}

TEST_F(ConfigApi, FileValuesOverrideDefaultsAndEnvOverridesFile) {
    TempFile conf("# test configuration\n"
                  "[mockfull]\n"
                  "chunk_size = 4KiB\n"
                  "threads = 16\n"
                  "verbose = yes\n"
                  "label = from file\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    auto rows = params();
    EXPECT_EQ(rows["mockfull.chunk_size"].value, "4096");
    EXPECT_EQ(rows["mockfull.chunk_size"].source, XFER_PARAM_FILE);
    EXPECT_EQ(rows["mockfull.busy"].source, XFER_PARAM_DEFAULT);
    EXPECT_EQ(received_params(), "chunk_size=4096;threads=16;verbose=1;label=from file;fail_silently=0;busy=0");

    EnvGuard chunk("XFER_MOCKFULL_CHUNK_SIZE", "1GB");
    EnvGuard verbose("XFER_MOCKFULL_VERBOSE", "off");
    rows = params();
    EXPECT_EQ(rows["mockfull.chunk_size"].value, "1000000000");
    EXPECT_EQ(rows["mockfull.chunk_size"].source, XFER_PARAM_ENV);
    EXPECT_EQ(rows["mockfull.threads"].source, XFER_PARAM_FILE);
    EXPECT_EQ(received_params(), "chunk_size=1000000000;threads=16;verbose=0;label=from file;fail_silently=0;busy=0");
}

TEST_F(ConfigApi, TopLevelKeysFromFileAreListedWithTheirSource) {
    TempFile conf("backend = mockfull\ndevice = 1\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    auto rows = params();
    EXPECT_EQ(rows["backend"].value, "mockfull");
    EXPECT_EQ(rows["backend"].source, XFER_PARAM_FILE);
    EXPECT_EQ(rows["device"].value, "1");
    EXPECT_EQ(rows["device"].source, XFER_PARAM_FILE);
    EnvGuard backend("XFER_BACKEND", "mock");
    rows = params();
    EXPECT_EQ(rows["backend"].value, "mock");
    EXPECT_EQ(rows["backend"].source, XFER_PARAM_ENV);
}

TEST_F(ConfigApi, UnknownTopLevelKeyNamesKeyAndLine) {
    TempFile conf("backend = mock\n\nbogus_key = 1\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({"'bogus_key'", conf.path() + ":3"});
}

TEST_F(ConfigApi, UnknownKeyInBackendSectionNamesKeyAndLine) {
    TempFile conf("[mockfull]\nthreads = 4\nchunk = 8MiB\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({"'chunk'", conf.path() + ":3", "[mockfull]", "chunk_size"});
}

TEST_F(ConfigApi, SectionOfABackendNotFoundIsAnUnknownKey) {
    TempFile conf("device = 0\n[warp_drive]\nspeed = 9\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({"'speed'", "[warp_drive]", conf.path() + ":3"});
}

TEST_F(ConfigApi, SectionOfAFoundButUnloadableBackendIsAccepted) {
    // One file serves machines where a CUDA plugin cannot load: its keys cannot be checked.
    TempFile conf("[junk]\nwhatever = 1\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"junk", "good"}));
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(ConfigApi, XferToolSectionIsLeftToTheTool) {
    // xfer-tool reads its run options from the same file; the library must not refuse them,
    // and must still check its own keys around that section.
    TempFile conf("backend = mock\n[xfer-tool]\nrepeats = 5\nsizes = 1KiB:1MiB\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open(nullptr, 0, &ctx));
    xfer_context_info info{};
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_info(ctx, &info));
    EXPECT_STREQ(info.backend, "mock");
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));

    TempFile bad("[xfer-tool]\nrepeats = 5\n[mock]\nno_such_key = 1\n");
    EnvGuard config2("XFER_CONFIG", bad.path());
    expect_config_error({"'no_such_key'", bad.path() + ":4"}, "mock");
}

TEST_F(ConfigApi, MalformedLineNamesTheLine) {
    TempFile conf("backend = mock\nno equals sign here\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({conf.path() + ":2", "no equals sign here"});
}

TEST_F(ConfigApi, BadDeviceValueNamesKeyValueAndLine) {
    TempFile conf("# c\ndevice = abc\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({"'device'", "'abc'", conf.path() + ":2"});
}

TEST_F(ConfigApi, NegativeDeviceInFileIsRejected) {
    TempFile conf("device = -1\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({conf.path() + ":1", ">= 0"});
}

TEST_F(ConfigApi, BadSizeValueNamesKeyValueAndLine) {
    TempFile conf("[mockfull]\nchunk_size = 8XB\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    expect_config_error({"chunk_size", "'8XB'", conf.path() + ":2", "unknown size unit"});
}

TEST_F(ConfigApi, BadBoolAndIntValuesAreRejected) {
    {
        TempFile conf("[mockfull]\nverbose = perhaps\n");
        EnvGuard config("XFER_CONFIG", conf.path());
        expect_config_error({"verbose", "'perhaps'", conf.path() + ":2"});
    }
    {
        TempFile conf("[mockfull]\nthreads = 99999999999\n");
        EnvGuard config("XFER_CONFIG", conf.path());
        expect_config_error({"threads", "'99999999999'", conf.path() + ":2"});
    }
}

TEST_F(ConfigApi, BadEnvironmentValueNamesTheVariable) {
    EnvGuard threads("XFER_MOCKFULL_THREADS", "many");
    expect_config_error({"XFER_MOCKFULL_THREADS", "'many'"});
}

TEST_F(ConfigApi, OpeningAnotherBackendLeavesItsSectionUnchecked) {
    // mockfull's plugin is not opened to open mock, so its keys cannot be typed: a bad value
    // there is reported when mockfull is opened or the backends are listed, not before.
    TempFile conf("[mockfull]\nverbose = perhaps\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mockfull", 0, &ctx));
    int count = 0;
    EXPECT_XFER(XFER_ERROR_CONFIG, xfer_backend_count(&count));
}

TEST_F(ConfigApi, NamedButMissingFileIsConfigError) {
    EnvGuard config("XFER_CONFIG", "/nonexistent/dir/xfer.conf");
    expect_config_error({"/nonexistent/dir/xfer.conf"});
}

TEST_F(ConfigApi, EmptyXferConfigMeansDefaults) {
    EnvGuard config("XFER_CONFIG", "");
    int count = 0;
    EXPECT_XFER(XFER_SUCCESS, xfer_param_count(&count));
}

TEST_F(ConfigApi, PluginPathKeyAddsFoldersAfterTheEnvironment) {
    TempFile conf("plugin_path = relative/ignored:" + plugin_dir("abi") + "\n");
    EnvGuard config("XFER_CONFIG", conf.path());
    auto bad = find_backend("badabi");
    ASSERT_TRUE(bad);
    EXPECT_TRUE(find_backend("mock")); // XFER_PLUGIN_PATH is still searched first
    auto rows = params();
    EXPECT_EQ(rows["plugin_path"].source, XFER_PARAM_ENV);
    EXPECT_EQ(rows["plugin_path"].value.rfind(plugin_dir("good") + ":" + plugin_dir("abi"), 0), 0u)
        << rows["plugin_path"].value;
    EXPECT_EQ(rows["plugin_path"].value.find("relative"), std::string::npos);
}

TEST_F(ConfigApi, ConfigErrorsLeaveNothingBehind) {
    {
        TempFile conf("bogus = 1\n");
        EnvGuard config("XFER_CONFIG", conf.path());
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mockfull", 0, &ctx));
    }
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(ConfigApi, ParamInfoValidatesArguments) {
    int count = 0;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_param_count(nullptr));
    ASSERT_XFER(XFER_SUCCESS, xfer_param_count(&count));
    xfer_param_info info{};
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_param_get_info(count, &info));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_param_get_info(-1, &info));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_param_get_info(0, nullptr));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
// The plugin side of the ABI, loaded directly: what each CUDA backend's table declares.
#include <cstring>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "plugin_loader.hpp"
#include "test_support.hpp"

namespace {

using xfer::test::load_plugin_directly;
using xfer::test::param_name;

class PluginTable : public ::testing::TestWithParam<std::string> {};

TEST_P(PluginTable, DescribesItselfForThisAbi) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    const xfer_backend_table &t = *plugin.table;
    EXPECT_EQ(unsigned{XFER_BACKEND_ABI_MAJOR}, t.abi_major);
    EXPECT_EQ(unsigned{XFER_BACKEND_ABI_MINOR}, t.abi_minor);
    EXPECT_EQ(sizeof(xfer_backend_table), t.struct_size);
    EXPECT_GE(t.struct_size, XFER_BACKEND_TABLE_V1_SIZE);
    ASSERT_NE(nullptr, t.name);
    EXPECT_STREQ(GetParam().c_str(), t.name) << "the table's name must match the file name";
    ASSERT_NE(nullptr, t.description);
    EXPECT_GT(std::strlen(t.description), 10u);
    EXPECT_EQ(XFER_DEVICE_KIND_CUDA, t.device_kind);
}

TEST_P(PluginTable, ImplementsEveryEntry) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    const xfer_backend_table &t = *plugin.table;
    const void *entries[] = {
        reinterpret_cast<const void *>(t.probe),
        reinterpret_cast<const void *>(t.context_create),
        reinterpret_cast<const void *>(t.context_destroy),
        reinterpret_cast<const void *>(t.buffer_alloc),
        reinterpret_cast<const void *>(t.buffer_free),
        reinterpret_cast<const void *>(t.stream_create),
        reinterpret_cast<const void *>(t.stream_destroy),
        reinterpret_cast<const void *>(t.stream_synchronize),
        reinterpret_cast<const void *>(t.device_info),
        reinterpret_cast<const void *>(t.buffer_copy_async),
        reinterpret_cast<const void *>(t.memcpy_async),
        reinterpret_cast<const void *>(t.memcpy_batch_async),
        reinterpret_cast<const void *>(t.stream_query),
        reinterpret_cast<const void *>(t.stream_wait_event),
        reinterpret_cast<const void *>(t.stream_launch_host_func),
        reinterpret_cast<const void *>(t.stream_native),
        reinterpret_cast<const void *>(t.event_create),
        reinterpret_cast<const void *>(t.event_destroy),
        reinterpret_cast<const void *>(t.event_record),
        reinterpret_cast<const void *>(t.event_synchronize),
        reinterpret_cast<const void *>(t.event_query),
        reinterpret_cast<const void *>(t.event_elapsed_ms),
        reinterpret_cast<const void *>(t.register_memory),
        reinterpret_cast<const void *>(t.unregister_memory),
        reinterpret_cast<const void *>(t.registration_stats),
        reinterpret_cast<const void *>(t.device_can_access_peer),
        reinterpret_cast<const void *>(t.memcpy_peer_async),
        reinterpret_cast<const void *>(t.buffer_copy_peer_async),
    };
    for (std::size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
        EXPECT_NE(nullptr, entries[i]) << "entry #" << i << " is NULL";
    }
    // The device count of a CUDA backend is the hardware's, not a parameter.
    EXPECT_EQ(nullptr, t.probe_params);
}

TEST_P(PluginTable, DeclaresTheCapsOfItsStrategy) {
    const std::map<std::string, unsigned> expected = {
        {"pageable", 0u}, // copies below staged_min_bytes go the driver's way, which may wait
        {"pinned", XFER_CAP_ASYNC_COPY},
        {"managed", XFER_CAP_SHARED_VIEW | XFER_CAP_MIGRATES | XFER_CAP_ASYNC_COPY},
        {"zerocopy", XFER_CAP_SHARED_VIEW | XFER_CAP_NO_COPY},
    };
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    EXPECT_EQ(expected.at(GetParam()), plugin.table->caps);
}

TEST_P(PluginTable, EntryPointReturnsTheSameTableEveryTime) {
    const auto plugin = load_plugin_directly(GetParam());
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    // A second load of the same name returns the cached table; the plugin's static table is
    // what the core keeps a pointer to for the life of the process.
    EXPECT_EQ(plugin.table, load_plugin_directly(GetParam()).table);
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, PluginTable, ::testing::ValuesIn(xfer::test::kCudaBackends), param_name);

TEST(PluginTablePageable, DeclaresFewParametersAndDerivesTheRest) {
    const auto plugin = load_plugin_directly("pageable");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    // What a user owns: `staging`, then what every CUDA backend declares (path, pin_limit,
    // host_threads). At most five.
    ASSERT_EQ(4u, plugin.table->param_count);
    const xfer_backend_param *p = plugin.table->params;
    const char *const names[] = {"staging", "path", "pin_limit", "host_threads"};
    const char *const types[] = {"string", "string", "size", "int"};
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_STREQ(names[i], p[i].name);
        EXPECT_STREQ(types[i], p[i].type);
        EXPECT_GT(std::strlen(p[i].help), 10u);
    }
    EXPECT_STREQ("auto", p[1].default_value);
    EXPECT_STREQ("0", p[3].default_value) << "0 = one per hardware thread but one";
    // What it derives: the engine's sizes, then the staged crossovers and buffer_registration_min,
    // registration_min and the batch values every CUDA backend derives.
    const char *const derived[] = {
        "staging_threads",         "staging_slots",    "chunk_size",       "staging_linger_us",
        "staging_linger_workers",  "staging_demote",   "staged_min_bytes", "staged_min_bytes_to_host",
        "buffer_registration_min", "registration_min", "batch_pack_max",   "batch_staging",
        "batch_host_threads"};
    ASSERT_EQ(sizeof derived / sizeof derived[0], plugin.table->derived_count);
    for (std::size_t i = 0; i < plugin.table->derived_count; ++i) {
        EXPECT_STREQ(derived[i], plugin.table->derived[i].name);
        EXPECT_GT(std::strlen(plugin.table->derived[i].help), 10u);
    }
    EXPECT_STREQ("1", plugin.table->derived[5].default_value)
        << "the head, remainder and tail are demoted unless turned off";
    EXPECT_NE(nullptr, plugin.table->context_derived_value);
    EXPECT_NE(nullptr, plugin.table->context_calibrate);
}

TEST(PluginTablePinned, DeclaresOnlyTheCommonParameters) {
    const auto plugin = load_plugin_directly("pinned");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    ASSERT_EQ(3u, plugin.table->param_count);
    EXPECT_STREQ("path", plugin.table->params[0].name);
    EXPECT_STREQ("pin_limit", plugin.table->params[1].name);
    EXPECT_STREQ("host_threads", plugin.table->params[2].name);
    // No staging engine: no staged crossovers among its derived values.
    for (std::size_t i = 0; i < plugin.table->derived_count; ++i)
        EXPECT_STRNE("staged_min_bytes", plugin.table->derived[i].name);
}

TEST(PluginTablePageable, RefusesBadParametersBeforeTouchingTheDevice) {
    const auto plugin = load_plugin_directly("pageable");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    struct Case {
        const char *name;
        const char *value;
    } const cases[] = {{"staging_threads", "257"},   {"staging_threads", "-3"},
                       {"chunk_size", "12abc"},      {"chunk_size", "1024"},
                       {"chunk_size", "2147483648"}, {"staging", "off"},
                       {"staging_slots", "99999"},   {"staging_linger_us", "1000001"},
                       {"staging_linger_us", "-1"},  {"staging_linger_workers", "257"},
                       {"staging_demote", "2"},      {"staging_demote", "-1"},
                       {"path", "fastest"},          {"pin_limit", "lots"},
                       {"host_threads", "257"},      {"staged_min_bytes", "-1"},
                       {"registration_min", "x"},    {"batch_host_threads", "0"}};
    for (const auto &c : cases) {
        xfer::test::reset_captured_error();
        const xfer_backend_param_value values[] = {{c.name, c.value}};
        void *sentinel = reinterpret_cast<void *>(0x1234);
        void *ctx = sentinel;
        EXPECT_EQ(XFER_ERROR_CONFIG, plugin.table->context_create(0, values, 1, &ctx)) << c.name << "=" << c.value;
        EXPECT_EQ(sentinel, ctx) << "output written on failure";
        EXPECT_NE(std::string::npos, xfer::test::captured_error().message.find(c.name))
            << xfer::test::captured_error().message;
    }
}

TEST(PluginTablePageable, AcceptsFewerSlotsThanWorkers) {
    // Every worker copies pieces of every slot: the arena need not follow the worker count.
    const auto plugin = load_plugin_directly("pageable");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    xfer::test::reset_captured_error();
    const xfer_backend_param_value values[] = {{"staging_threads", "4"}, {"staging_slots", "1"}};
    void *ctx = nullptr;
    const xfer_status st = plugin.table->context_create(0, values, 2, &ctx);
    EXPECT_NE(XFER_ERROR_CONFIG, st) << xfer::test::captured_error().message;
    if (st == XFER_SUCCESS) {
        EXPECT_EQ(XFER_SUCCESS, plugin.table->context_destroy(ctx)) << xfer::test::captured_error().message;
    }
}

TEST(PluginTablePageable, AcceptsEveryPathOverride) {
    const auto plugin = load_plugin_directly("pageable");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    for (const char *path : {"auto", "driver", "staged", "registered"}) {
        xfer::test::reset_captured_error();
        const xfer_backend_param_value values[] = {{"path", path}, {"chunk_size", "4096"}};
        void *ctx = nullptr;
        const xfer_status st = plugin.table->context_create(0, values, 2, &ctx);
        // The values pass; what follows depends on the machine: a context where there is a
        // device, the no-device status here. Never a configuration error.
        EXPECT_NE(XFER_ERROR_CONFIG, st) << path << ": " << xfer::test::captured_error().message;
        if (st == XFER_SUCCESS) {
            ASSERT_NE(nullptr, ctx);
            EXPECT_EQ(XFER_SUCCESS, plugin.table->context_destroy(ctx)) << xfer::test::captured_error().message;
        } else {
            EXPECT_TRUE(st == XFER_ERROR_NO_DEVICE || st == XFER_ERROR_BACKEND_UNAVAILABLE)
                << st << ": " << xfer::test::captured_error().message;
        }
    }
}

TEST(PluginTablePinned, RefusesTheStagedPathItHasNoEngineFor) {
    const auto plugin = load_plugin_directly("pinned");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    xfer::test::reset_captured_error();
    const xfer_backend_param_value values[] = {{"path", "staged"}};
    void *ctx = nullptr;
    EXPECT_EQ(XFER_ERROR_CONFIG, plugin.table->context_create(0, values, 1, &ctx));
    EXPECT_NE(std::string::npos, xfer::test::captured_error().message.find("no staging engine"))
        << xfer::test::captured_error().message;
}

TEST(PluginTablePageable, HelpSaysWhatTheParametersDo) {
    const auto plugin = load_plugin_directly("pageable");
    ASSERT_NE(nullptr, plugin.table) << plugin.load_error;
    const std::string staging_help = plugin.table->params[0].help;
    const std::string path_help = plugin.table->params[1].help;
    const std::string threads_help = plugin.table->derived[0].help;
    const std::string slots_help = plugin.table->derived[1].help;
    EXPECT_NE(std::string::npos, staging_help.find("async")) << staging_help;
    EXPECT_NE(std::string::npos, path_help.find("calibration")) << path_help;
    EXPECT_NE(std::string::npos, threads_help.find("0 = one per hardware thread")) << threads_help;
    EXPECT_NE(std::string::npos, slots_help.find("page-locked")) << slots_help;
}

} // namespace

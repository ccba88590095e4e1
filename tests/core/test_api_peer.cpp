// SPDX-License-Identifier: Apache-2.0
// The peer-copy API against mock plugins: validation the core does before any backend sees the
// call (contexts of two backends), NOT_SUPPORTED from a backend without the ABI 1.2 entries,
// and plugins built for plugin ABI 1.0 and 1.1 still loading under this 1.2 core.
#include <cstring>

#include "test_support.hpp"
#include <xfer/xfer_backend.h>

using namespace xfer::test;

namespace {

class PeerApi : public CoreTest {};

TEST_F(PeerApi, ContextsOfTwoBackendsAreRefusedBeforeTheBackend) {
    xfer_context a = nullptr, b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &a));
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 1, &b));
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(b, &s));
    unsigned char x[16] = {0}, y[16] = {0};
    const long calls = mockfull_calls();
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_memcpy_peer_async(a, x, b, y, sizeof x, s));
    const std::string m = xfer_last_error();
    EXPECT_NE(m.find("backend 'mock'"), std::string::npos) << m;
    EXPECT_NE(m.find("backend 'mockfull'"), std::string::npos) << m;
    int can = -1;
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_device_can_access_peer(b, a, &can));
    EXPECT_EQ(can, -1);
    EXPECT_EQ(mockfull_calls(), calls); // nothing reached the backend
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(b));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(a));
}

// Every peer call between d0 and d1 (devices 0 and 1 of `backend`) answers NOT_SUPPORTED and
// names the call or the backend; the buffers and the stream they need still work.
void expect_no_peer_copies(const char *backend, xfer_context d0, xfer_context d1) {
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(d0, &s));
    xfer_buffer b0 = nullptr, b1 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(d0, 64, XFER_ALLOC_DEFAULT, &b0));
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(d1, 64, XFER_ALLOC_DEFAULT, &b1));
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED,
                xfer_memcpy_peer_async(d1, xfer_device_ptr(b1), d0, xfer_device_ptr(b0), 64, s));
    EXPECT_NE(std::string(xfer_last_error()).find("xfer_memcpy_peer_async"), std::string::npos) << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_copy_peer_async(b1, 0, b0, 0, 64, s));
    int can = -1;
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_device_can_access_peer(d0, d1, &can));
    EXPECT_NE(std::string(xfer_last_error()).find(std::string("'") + backend + "'"), std::string::npos)
        << xfer_last_error();
    EXPECT_EQ(can, -1);
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b1));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b0));
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
}

// The mock plugin `name` (folder and backend), built for plugin ABI 1.`minor` with two devices,
// loads under this core; opens its devices 0 and 1.
void open_older_plugin(const char *name, unsigned minor, xfer_context *d0, xfer_context *d1) {
    auto older = find_backend(name);
    ASSERT_TRUE(older);
    EXPECT_EQ(older->available, 1) << older->reason;
    EXPECT_EQ(older->abi_minor, minor);
    EXPECT_EQ(older->device_count, 2);
    ASSERT_XFER(XFER_SUCCESS, xfer_open(name, 0, d0));
    ASSERT_XFER(XFER_SUCCESS, xfer_open(name, 1, d1));
}

TEST_F(PeerApi, BackendWithoutPeerEntriesAnswersNotSupported) {
    xfer_context d0 = nullptr, d1 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &d0));
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 1, &d1));
    expect_no_peer_copies("mockfull", d0, d1);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d1));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d0));
}

// Older plugins: the peer (and, for 1.0, registration) entries their tables hold in memory past
// their struct_size are never called.
TEST_F(PeerApi, PluginOfAbi10LoadsAndHasNoPeerCopies) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"older"}));
    xfer_context d0 = nullptr, d1 = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_older_plugin("older", 0, &d0, &d1));
    expect_no_peer_copies("older", d0, d1); // its 1.0 entries (buffers, streams) still work
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d1));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d0));
}

TEST_F(PeerApi, PluginOfAbi11LoadsWithRegistrationAndHasNoPeerCopies) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"older11"}));
    xfer_context d0 = nullptr, d1 = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_older_plugin("older11", 1, &d0, &d1));
    int dummy = 0;
    EXPECT_XFER(XFER_SUCCESS, xfer_register(d0, &dummy, sizeof dummy, XFER_REGISTER_DEFAULT));
    xfer_registration_stats stats{};
    EXPECT_XFER(XFER_SUCCESS, xfer_registration_get_stats(d0, &stats));
    EXPECT_EQ(stats.registered_ranges, 1u);
    EXPECT_XFER(XFER_SUCCESS, xfer_unregister(d0, &dummy));
    expect_no_peer_copies("older11", d0, d1);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d1));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(d0));
}

// The core hands the backend the context that owns the stream (dst's or src's), the offsets and
// the pointers exactly as given, and the backend's direct-access answer.
TEST_F(PeerApi, DispatchPassesTheStreamsContextOffsetsAndAnswer) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"peer"}));
    const auto last_stream_device = [] {
        return mock_counter("peer", "mockpeer", "xfer_mock_last_peer_stream_device");
    };
    xfer_context d0 = nullptr, d1 = nullptr, d2 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockpeer", 0, &d0));
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockpeer", 1, &d1));
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockpeer", 2, &d2));
    xfer_stream s0 = nullptr, s1 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(d0, &s0));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(d1, &s1));
    xfer_buffer b0 = nullptr, b1 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(d0, 256, XFER_ALLOC_DEFAULT, &b0));
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(d1, 256, XFER_ALLOC_DEFAULT, &b1));
    const auto data = random_bytes(256, 41);
    std::memcpy(xfer_device_ptr(b0), data.data(), 256);
    std::memset(xfer_device_ptr(b1), 0, 256);

    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_peer_async(d1, xfer_device_ptr(b1), d0, xfer_device_ptr(b0), 256, s1));
    EXPECT_EQ(last_stream_device(), 1);
    EXPECT_EQ(0, std::memcmp(data.data(), xfer_device_ptr(b1), 256));
    std::memset(xfer_device_ptr(b1), 0, 256);
    ASSERT_XFER(XFER_SUCCESS, xfer_copy_peer_async(b1, 100, b0, 10, 50, s0));
    EXPECT_EQ(last_stream_device(), 0);
    const auto *got = static_cast<const unsigned char *>(xfer_device_ptr(b1));
    EXPECT_EQ(0, std::memcmp(data.data() + 10, got + 100, 50));
    EXPECT_EQ(got[99], 0);
    EXPECT_EQ(got[150], 0);

    int can = -1;
    ASSERT_XFER(XFER_SUCCESS, xfer_device_can_access_peer(d0, d2, &can));
    EXPECT_EQ(can, 1);
    ASSERT_XFER(XFER_SUCCESS, xfer_device_can_access_peer(d0, d1, &can));
    EXPECT_EQ(can, 0);
    // A stream of the third device belongs to neither context of the copy.
    xfer_stream s2 = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(d2, &s2));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_copy_peer_async(b1, 0, b0, 0, 1, s2));
    EXPECT_NE(std::string(xfer_last_error()).find("neither"), std::string::npos) << xfer_last_error();
    for (xfer_context c : {d0, d1, d2}) EXPECT_XFER(XFER_SUCCESS, xfer_close(c));
}

} // namespace

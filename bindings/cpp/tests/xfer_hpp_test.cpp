// SPDX-License-Identifier: Apache-2.0
// The C++ layer on the host backend: bytes round-tripped and compared, errors carry status and
// message, handles are move-only and released exactly once, objects keep their context open
// after the Context variable is gone; which path each copy took (statistics, the observer, the
// slow-path policy). Built as C++17 and as C++20.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <xfer/xfer.hpp>

static_assert(!std::is_copy_constructible_v<xfer::Context>);
static_assert(!std::is_copy_constructible_v<xfer::Buffer>);
static_assert(!std::is_copy_constructible_v<xfer::Stream>);
static_assert(!std::is_copy_constructible_v<xfer::Event>);
static_assert(std::is_nothrow_move_constructible_v<xfer::Buffer>);
static_assert(std::is_nothrow_move_assignable_v<xfer::Stream>);
static_assert(!std::is_copy_constructible_v<xfer::Registration>);
static_assert(std::is_nothrow_move_constructible_v<xfer::Registration>);
static_assert(std::is_nothrow_move_assignable_v<xfer::Registration>);
static_assert(std::is_nothrow_move_constructible_v<xfer::Context>);
static_assert(std::is_nothrow_move_assignable_v<xfer::Context>);
static_assert(std::is_nothrow_move_assignable_v<xfer::Event>);

namespace {

xfer::Context host_ctx() { return xfer::Context("host", 0); }

TEST(XferHpp, RoundTripsDoublesThroughTheDeviceView) {
    xfer::Context ctx = host_ctx();
    EXPECT_EQ(ctx.backend(), "host");
    EXPECT_EQ(ctx.device_kind(), XFER_DEVICE_KIND_HOST);
    xfer::Buffer buf(ctx, 4099 * sizeof(double));
    xfer::Stream s(ctx);
    auto host = buf.host_span<double>();
    ASSERT_EQ(host.size(), 4099u);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = 0.5 * static_cast<double>(i) - 7.25;
    buf.copy_async(XFER_TO_DEVICE, s);
    s.synchronize();
    const double *dev = buf.device<double>(); // the host backend's device view is host memory
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(dev[i], 0.5 * static_cast<double>(i) - 7.25) << i;
    for (double &x : host) x = -1;
    buf.copy_async(XFER_TO_HOST, 8 * sizeof(double), 16 * sizeof(double), s);
    xfer::Event done(ctx);
    done.record(s);
    done.synchronize();
    EXPECT_TRUE(done.query());
    s.synchronize();
    EXPECT_TRUE(s.query());
    for (std::size_t i = 0; i < host.size(); ++i)
        ASSERT_EQ(host[i], (i >= 8 && i < 24) ? 0.5 * static_cast<double>(i) - 7.25 : -1.0) << i;
}

TEST(XferHpp, ErrorsCarryStatusAndMessage) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer buf(ctx, 64);
    xfer::Stream s(ctx);
    try {
        buf.copy_async(XFER_TO_DEVICE, 60, 8, s);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_OUT_OF_BOUNDS);
        EXPECT_EQ(std::string(e.what()).rfind("xfer_copy_async: XFER_ERROR_OUT_OF_BOUNDS: ", 0), 0u) << e.what();
    }
    try {
        xfer::Context missing("no-such-backend", 0);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_BACKEND_NOT_FOUND);
        EXPECT_NE(std::string(e.what()).find("no-such-backend"), std::string::npos) << e.what();
    }
    EXPECT_THROW(xfer::Buffer(ctx, 0), xfer::Error);
    // The buffer is intact after the failures.
    buf.host<unsigned char>()[0] = 0xa5;
    buf.copy(XFER_TO_DEVICE);
    EXPECT_EQ(buf.device<unsigned char>()[0], 0xa5);
}

TEST(XferHpp, MovedHandlesAreReleasedOnce) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer a(ctx, 128);
    xfer_buffer raw = a.get();
    xfer::Buffer b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);
    EXPECT_EQ(b.get(), raw);
    EXPECT_EQ(xfer_buffer_size(raw), 128u);
    {
        xfer::Buffer c(ctx, 32);
        c = std::move(b); // frees c's own buffer, takes b's
        EXPECT_EQ(c.get(), raw);
    }
    EXPECT_EQ(xfer_buffer_size(raw), 0u); // freed once, by c's destructor
    EXPECT_EQ(xfer_free(raw), XFER_ERROR_INVALID_HANDLE);
}

TEST(XferHpp, RawAndBatchCopies) {
    xfer::Context ctx = host_ctx();
    xfer::Stream s(ctx);
    std::vector<std::uint32_t> src(1000), dst(1000, 0), dst2(1000, 0);
    std::iota(src.begin(), src.end(), 17u);
    ctx.memcpy_async(dst.data(), src.data(), src.size() * 4, XFER_COPY_HOST_TO_HOST, s);
    ctx.memcpy_batch_async({dst2.data(), dst2.data() + 500}, {src.data(), src.data() + 500}, {2000, 2000},
                           XFER_COPY_HOST_TO_HOST, s);
    s.synchronize();
    EXPECT_EQ(dst, src);
    EXPECT_EQ(dst2, src);
    EXPECT_THROW(ctx.memcpy_batch_async({dst.data()}, {}, {4}, XFER_COPY_HOST_TO_HOST, s), xfer::Error);
}

TEST(XferHpp, EventsTimeAndStreamsWait) {
    xfer::Context ctx = host_ctx();
    xfer::Stream a(ctx), b(ctx);
    xfer::Event start(ctx), end(ctx);
    start.record(a);
    end.record(a);
    b.wait(end);
    b.synchronize();
    end.synchronize();
    EXPECT_GE(xfer::Event::elapsed_ms(start, end), 0.0f);
    xfer::Event untimed(ctx, XFER_EVENT_DISABLE_TIMING);
    untimed.record(a);
    untimed.synchronize();
    try {
        xfer::Event::elapsed_ms(start, untimed);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_STATE);
    }
    EXPECT_NE(a.native(), nullptr);
}

xfer_status status_of(void (*fn)(const xfer::Context &, void *), const xfer::Context &ctx, void *arg) {
    try {
        fn(ctx, arg);
    } catch (const xfer::Error &e) {
        return e.status();
    }
    return XFER_SUCCESS;
}

TEST(XferHpp, RegistersHostMemoryAndUnregisters) {
    xfer::Context ctx = host_ctx();
    xfer_registration_stats st = ctx.registration_stats();
    EXPECT_EQ(st.registered_ranges, 0u);
    EXPECT_EQ(st.registered_bytes, 0u);
    std::vector<double> data(100000, 2.5);
    const std::size_t bytes = data.size() * sizeof(double);
    {
        xfer::Registration reg = ctx.register_memory(data);
        EXPECT_TRUE(reg);
        EXPECT_EQ(reg.ptr(), data.data());
        EXPECT_EQ(reg.bytes(), bytes);
        st = ctx.registration_stats();
        EXPECT_EQ(st.registered_ranges, 1u);
        EXPECT_EQ(st.registered_bytes, bytes);
        EXPECT_EQ(st.cache_limit_bytes, 0u); // host has no registration cache
        // The same range, or a part of it, again: XFER_ERROR_INVALID_STATE.
        try {
            (void)ctx.register_memory(data.data(), bytes);
            FAIL() << "no exception";
        } catch (const xfer::Error &e) {
            EXPECT_EQ(e.status(), XFER_ERROR_INVALID_STATE);
            EXPECT_EQ(std::string(e.what()).rfind("xfer_register: XFER_ERROR_INVALID_STATE", 0), 0u) << e.what();
        }
        EXPECT_EQ(status_of([](const xfer::Context &c, void *p) { (void)c.register_memory(p, 4096); }, ctx,
                            data.data() + 512),
                  XFER_ERROR_INVALID_STATE);
        // A second, read-only range; moved, then unregistered explicitly.
        std::uint32_t other[1024] = {};
        xfer::Registration ro = ctx.register_memory(other, XFER_REGISTER_READ_ONLY);
        EXPECT_EQ(ctx.registration_stats().registered_bytes, bytes + sizeof other);
        xfer::Registration moved(std::move(ro));
        EXPECT_FALSE(ro);
        EXPECT_EQ(ctx.registration_stats().registered_ranges, 2u);
        moved.unregister();
        EXPECT_FALSE(moved);
        moved.unregister(); // once only
        EXPECT_EQ(ctx.registration_stats().registered_ranges, 1u);
    } // reg's destructor unregisters
    st = ctx.registration_stats();
    EXPECT_EQ(st.registered_ranges, 0u);
    EXPECT_EQ(st.registered_bytes, 0u);
    EXPECT_EQ(xfer_unregister(ctx.get(), data.data()), XFER_ERROR_INVALID_ARGUMENT); // not registered
}

TEST(XferHpp, RegisterRefusesBadArguments) {
    xfer::Context ctx = host_ctx();
    std::vector<char> data(8192);
    EXPECT_EQ(status_of([](const xfer::Context &c, void *) { (void)c.register_memory(nullptr, 4096); }, ctx, nullptr),
              XFER_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([](const xfer::Context &c, void *p) { (void)c.register_memory(p, 0); }, ctx, data.data()),
              XFER_ERROR_INVALID_SIZE);
    EXPECT_EQ(
        status_of([](const xfer::Context &c, void *p) { (void)c.register_memory(p, 8192, 0x80u); }, ctx, data.data()),
        XFER_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ctx.registration_stats().registered_ranges, 0u);
    // The registration keeps the context open after close(); unregistering lets the last share go.
    xfer::Registration reg = ctx.register_memory(data);
    EXPECT_EQ(ctx.registration_stats().registered_ranges, 1u);
    const xfer_context raw = ctx.get();
    EXPECT_FALSE(ctx.close());
    EXPECT_EQ(ctx.get(), nullptr);
    xfer_registration_stats st{};
    ASSERT_EQ(xfer_registration_get_stats(raw, &st), XFER_SUCCESS);
    EXPECT_EQ(st.registered_ranges, 1u);
    reg.unregister();
    EXPECT_EQ(xfer_registration_get_stats(raw, &st), XFER_ERROR_INVALID_HANDLE); // closed with the last share
}

TEST(XferHpp, LibraryQueries) {
    xfer::Version v = xfer::version();
    EXPECT_EQ(v.major, XFER_VERSION_MAJOR);
    bool host_found = false;
    for (const xfer_backend_info &b : xfer::backends()) host_found = host_found || std::string(b.name) == "host";
    EXPECT_TRUE(host_found);
    bool backend_key = false;
    for (const xfer::Param &p : xfer::params()) backend_key = backend_key || (p.section.empty() && p.name == "backend");
    EXPECT_TRUE(backend_key);
    xfer::Context ctx = host_ctx();
    EXPECT_GT(ctx.device_info().total_memory, 0u);
    EXPECT_TRUE(ctx.close()); // nothing else holds it: closed now
    EXPECT_EQ(ctx.get(), nullptr);
    try {
        ctx.close();
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE);
    }
}

TEST(XferHpp, SettingsAreTheBackendsParametersWithTheirSources) {
    xfer::Context ctx = host_ctx();
    const std::vector<xfer::Setting> settings = ctx.settings();
    std::vector<std::string> declared;
    for (const xfer::Param &p : xfer::params())
        if (p.section == "host") declared.push_back(p.name);
    ASSERT_EQ(declared.size(), settings.size()); // host derives nothing
    for (std::size_t i = 0; i < settings.size(); ++i) {
        EXPECT_EQ(declared[i], settings[i].name);
        EXPECT_EQ("host", settings[i].section);
        EXPECT_FALSE(settings[i].derived);
        EXPECT_NE(XFER_PARAM_CALIBRATION, settings[i].source);
    }
    xfer_param_info info{};
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT,
              xfer_context_get_setting(ctx.get(), static_cast<int>(settings.size()), &info, nullptr));
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_context_get_setting(ctx.get(), -1, &info, nullptr));
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_context_setting_count(ctx.get(), nullptr));
}

TEST(XferHpp, TheHostBackendHasNothingToCalibrate) {
    xfer::Context ctx = host_ctx();
    try {
        (void)ctx.calibrate();
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(XFER_ERROR_NOT_SUPPORTED, e.status());
        EXPECT_NE(std::string::npos, std::string(e.what()).find("nothing to calibrate")) << e.what();
    }
    xfer_calibration_info small{};
    small.struct_size = sizeof small - 1;
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_calibrate(ctx.get(), 0, &small));
    xfer_calibration_info info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_calibrate(ctx.get(), 0x80u, &info));
    EXPECT_NE(std::string::npos, std::string(xfer_last_error()).find("unknown flag bits"));
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_calibrate(ctx.get(), 0, nullptr));
}

// A buffer, a stream and an event whose Context variable is gone by the time they are used.
struct Orphans {
    xfer::Buffer buf;
    xfer::Stream s;
    xfer::Event done;
    xfer_context raw;
};
Orphans objects_of_a_context_gone(std::size_t bytes) {
    xfer::Context ctx = host_ctx();
    return Orphans{xfer::Buffer(ctx, bytes), xfer::Stream(ctx), xfer::Event(ctx), ctx.get()};
}

bool context_open(xfer_context raw) {
    xfer_context_info info{};
    return xfer_context_get_info(raw, &info) == XFER_SUCCESS;
}

std::uint32_t pattern(std::size_t i) { return static_cast<std::uint32_t>(i * 2654435761u + 12345u); }

TEST(XferHpp, BufferOutlivesItsContextVariable) {
    Orphans o = objects_of_a_context_gone(70001 * sizeof(std::uint32_t));
    ASSERT_TRUE(context_open(o.raw)); // the objects hold it
    auto host = o.buf.host_span<std::uint32_t>();
    ASSERT_EQ(host.size(), 70001u);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = pattern(i);
    o.buf.copy_async(XFER_TO_DEVICE, o.s);
    o.done.record(o.s);
    o.done.synchronize();
    EXPECT_TRUE(o.done.query());
    const std::uint32_t *dev = o.buf.device<std::uint32_t>(); // host's device view is host memory
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(dev[i], pattern(i)) << i;
    std::fill(host.begin(), host.end(), 0u);
    o.buf.copy_async(XFER_TO_HOST, 4 * 1000, 4 * 30000, o.s);
    o.s.synchronize();
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], (i >= 1000 && i < 31000) ? pattern(i) : 0u) << i;

    // The context closes with the last object of it, not before.
    xfer::Context other = host_ctx();
    o.buf = xfer::Buffer(other, 64); // frees the buffer; the stream and the event still hold the context
    EXPECT_TRUE(context_open(o.raw));
    o.s = xfer::Stream(other);
    EXPECT_TRUE(context_open(o.raw));
    o.done = xfer::Event(other);
    EXPECT_FALSE(context_open(o.raw));
    EXPECT_EQ(o.buf.bytes(), 64u);
}

TEST(XferHpp, ObjectsKeepAClosedOrTemporaryContextOpen) {
    // A temporary Context: the buffer and the stream keep it open.
    xfer::Buffer buf(xfer::Context("host", 0), 4096);
    xfer::Stream s(xfer::Context("host", 0));
    // buf and s belong to two contexts: refused, and the buffer is still usable.
    try {
        buf.copy_async(XFER_TO_DEVICE, s);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE) << e.what();
    }
    auto bytes = buf.host_span<unsigned char>();
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
    buf.copy(XFER_TO_DEVICE);
    std::fill(bytes.begin(), bytes.end(), static_cast<unsigned char>(0));
    buf.copy(XFER_TO_HOST);
    for (std::size_t i = 0; i < bytes.size(); ++i) ASSERT_EQ(bytes[i], static_cast<unsigned char>(i * 7 + 3)) << i;

    // close() with objects left: the Context object lets go, the objects go on working.
    xfer::Context ctx = host_ctx();
    const xfer_context raw = ctx.get();
    xfer::Context moved(std::move(ctx));
    EXPECT_EQ(ctx.get(), nullptr);
    EXPECT_EQ(moved.get(), raw);
    xfer::Buffer buf2(moved, 256);
    xfer::Stream s2(moved);
    EXPECT_FALSE(moved.close());
    EXPECT_EQ(moved.get(), nullptr);
    EXPECT_TRUE(context_open(raw));
    buf2.host<unsigned char>()[255] = 0x5a;
    buf2.copy_async(XFER_TO_DEVICE, s2);
    s2.synchronize();
    EXPECT_EQ(buf2.device<unsigned char>()[255], 0x5a);
    // An object can no longer be made from the closed Context object.
    try {
        xfer::Buffer more(moved, 16);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE);
        EXPECT_EQ(std::string(e.what()).rfind("xfer_alloc: XFER_ERROR_INVALID_HANDLE", 0), 0u) << e.what();
    }
    xfer::Buffer moved_buf(std::move(buf2)); // moved objects carry the share with them
    EXPECT_EQ(buf2.get(), nullptr);
    EXPECT_EQ(buf2.bytes(), 0u);
    EXPECT_EQ(buf2.host(), nullptr);
    { xfer::Stream gone(std::move(s2)); }
    EXPECT_TRUE(context_open(raw));
    { xfer::Buffer gone(std::move(moved_buf)); }
    EXPECT_FALSE(context_open(raw));
}

TEST(XferHpp, ObjectsOfOneContextMayGoOnAnyThread) {
    xfer_context raw = nullptr;
    std::vector<std::optional<xfer::Buffer>> bufs(8);
    {
        xfer::Context ctx = host_ctx();
        raw = ctx.get();
        for (auto &b : bufs) b.emplace(ctx, 1024);
    }
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < bufs.size(); ++i)
        threads.emplace_back([&b = bufs[i], i] {
            b->host<unsigned char>()[7] = static_cast<unsigned char>(i + 1);
            b->copy(XFER_TO_DEVICE);
            EXPECT_EQ(b->device<unsigned char>()[7], static_cast<unsigned char>(i + 1));
            b.reset(); // the last of the eight closes the context, on its own thread
        });
    for (std::thread &t : threads) t.join();
    EXPECT_FALSE(context_open(raw));
}

TEST(XferHpp, WrappingANativeStreamIsNotSupportedOnHost) {
    xfer::Context ctx = host_ctx();
    xfer::Stream s(ctx);
    int not_a_stream = 0;
    for (void *native : {static_cast<void *>(&not_a_stream), s.native(), static_cast<void *>(nullptr)}) {
        try {
            (void)xfer::Stream::wrap(ctx, native);
            FAIL() << "no exception";
        } catch (const xfer::Error &e) {
            EXPECT_EQ(e.status(), XFER_ERROR_NOT_SUPPORTED);
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("xfer_stream_wrap: XFER_ERROR_NOT_SUPPORTED: ", 0), 0u) << what;
            EXPECT_NE(what.find("'host'"), std::string::npos) << what; // the message names the backend
        }
    }
    s.synchronize(); // the refusals changed nothing
    xfer::Context gone = host_ctx();
    EXPECT_TRUE(gone.close());
    try {
        (void)xfer::Stream::wrap(gone, &not_a_stream);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE) << e.what();
    }
}

TEST(XferHpp, NativeEventsAndStreams) {
    xfer::Context ctx = host_ctx();
    xfer::Stream s(ctx);
    xfer::Event a(ctx), b(ctx, XFER_EVENT_DISABLE_TIMING);
    void *na = a.native();
    EXPECT_NE(na, nullptr);
    EXPECT_EQ(na, xfer_event_native(a.get()));
    EXPECT_NE(b.native(), nullptr);
    EXPECT_NE(b.native(), na); // one native object per event
    a.record(s);
    a.synchronize();
    EXPECT_EQ(a.native(), na); // recording keeps it
    xfer::Event moved(std::move(a));
    EXPECT_EQ(moved.native(), na);
    try {
        (void)a.native();
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE);
        EXPECT_EQ(std::string(e.what()).rfind("xfer_event_native: XFER_ERROR_INVALID_HANDLE", 0), 0u) << e.what();
    }
    void *ns = s.native();
    xfer::Stream s_moved(std::move(s));
    EXPECT_EQ(s_moved.native(), ns);
    try {
        (void)s.native();
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE);
    }
}

// ------------------------------------------------------------ which path each copy took

TEST(XferHppPaths, NamesOfPathsAndReasons) {
    EXPECT_STREQ(xfer::path_name(XFER_PATH_HOST_MEMCPY), "host_memcpy");
    EXPECT_STREQ(xfer::path_name(XFER_PATH_DRIVER_PAGEABLE), "driver_pageable");
    EXPECT_STREQ(xfer::path_name(XFER_PATH_COUNT), "unknown");
    EXPECT_STREQ(xfer::reason_name(XFER_REASON_CACHE_FULL), "cache_full");
    EXPECT_STREQ(xfer::reason_name(XFER_REASON_MEMORY), "memory");
    EXPECT_STREQ(xfer::reason_name(XFER_REASON_COUNT), "unknown");
    EXPECT_TRUE(xfer::is_slow_path(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, XFER_SLOW_PATH_MIN_BYTES));
    EXPECT_FALSE(
        xfer::is_slow_path(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, XFER_SLOW_PATH_MIN_BYTES - 1));
    EXPECT_FALSE(
        xfer::is_slow_path(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_BELOW_CROSSOVER, 64 * XFER_SLOW_PATH_MIN_BYTES));
    EXPECT_FALSE(xfer::is_slow_path(XFER_PATH_HOST_MEMCPY, XFER_REASON_MEMORY, 64 * XFER_SLOW_PATH_MIN_BYTES));
}

TEST(XferHppPaths, StatsCountEveryHostCopyExactlyAndReset) {
    xfer::Context ctx = host_ctx();
    xfer_context_stats st = ctx.stats();
    EXPECT_EQ(st.struct_size, sizeof(xfer_context_stats));
    EXPECT_EQ(st.version, XFER_CONTEXT_STATS_VERSION);
    EXPECT_EQ(st.path_count, unsigned{XFER_PATH_COUNT});
    EXPECT_EQ(st.calls, 0u);

    xfer::Buffer buf(ctx, 4096);
    xfer::Stream s(ctx);
    std::memset(buf.host(), 0x3c, 4096);
    for (int i = 0; i < 3; ++i) buf.copy_async(XFER_TO_DEVICE, s); // 3 x 4096
    buf.copy(XFER_TO_HOST, 96, 1000);                              // 1000
    std::vector<unsigned char> src(70000, 0x7e), dst(70000, 0);
    ctx.memcpy_async(dst.data(), src.data(), 70000, XFER_COPY_HOST_TO_HOST, s);
    ctx.memcpy_batch_async({dst.data(), dst.data() + 100}, {src.data(), src.data() + 100}, {10, 20},
                           XFER_COPY_HOST_TO_HOST, s);
    s.synchronize();
    EXPECT_EQ(dst[69999], 0x7e);
    EXPECT_EQ(buf.device()[4095], 0x3c);

    st = ctx.stats();
    EXPECT_EQ(st.calls, 6u);
    EXPECT_EQ(st.paths[XFER_PATH_HOST_MEMCPY].copies, 3u + 1u + 1u + 2u); // the batch counts its entries
    EXPECT_EQ(st.paths[XFER_PATH_HOST_MEMCPY].bytes, 3u * 4096u + 1000u + 70000u + 30u);
    EXPECT_GT(st.paths[XFER_PATH_HOST_MEMCPY].host_ns, 0u);
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        if (p == XFER_PATH_HOST_MEMCPY) continue;
        EXPECT_EQ(st.paths[p].copies, 0u) << xfer::path_name(static_cast<xfer_copy_path>(p));
        EXPECT_EQ(st.paths[p].bytes, 0u) << xfer::path_name(static_cast<xfer_copy_path>(p));
    }
    EXPECT_EQ(st.slow_copies, 0u);
    EXPECT_EQ(st.refused_calls, 0u);

    // Registrations are counted too (the host backend keeps bookkeeping only).
    std::vector<double> data(3 * 512);
    {
        xfer::Registration reg = ctx.register_memory(data);
        st = ctx.stats();
        EXPECT_EQ(st.registrations, 1u);
        EXPECT_EQ(st.registered_bytes, data.size() * sizeof(double));
        EXPECT_EQ(st.unregistrations, 0u);
    }
    st = ctx.stats();
    EXPECT_EQ(st.unregistrations, 1u);
    EXPECT_EQ(st.unregistered_bytes, data.size() * sizeof(double));

    ctx.reset_stats();
    st = ctx.stats();
    EXPECT_EQ(st.calls, 0u);
    EXPECT_EQ(st.registrations, 0u);
    EXPECT_EQ(st.unregistrations, 0u);
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        EXPECT_EQ(st.paths[p].copies, 0u);
        EXPECT_EQ(st.paths[p].bytes, 0u);
        EXPECT_EQ(st.paths[p].host_ns, 0u);
    }
    buf.copy(XFER_TO_DEVICE, 0, 17);
    st = ctx.stats();
    EXPECT_EQ(st.calls, 1u);
    EXPECT_EQ(st.paths[XFER_PATH_HOST_MEMCPY].bytes, 17u);
}

TEST(XferHppPaths, ObserverGetsOneRecordPerCallAndCanBeRemoved) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer buf(ctx, 8192);
    xfer::Stream s(ctx);
    std::vector<xfer_copy_record> seen;
    std::vector<std::string> functions;
    ctx.set_copy_observer([&](const xfer_copy_record &r) {
        seen.push_back(r);
        functions.emplace_back(r.function);
    });
    buf.copy_async(XFER_TO_DEVICE, 0, 5000, s);
    buf.copy(XFER_TO_HOST, 8, 100);
    std::vector<unsigned char> src(300, 1), dst(300, 0);
    ctx.memcpy_batch_async({dst.data(), dst.data() + 200}, {src.data(), src.data() + 200}, {150, 100},
                           XFER_COPY_HOST_TO_HOST, s);
    s.synchronize();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(functions[0], "xfer_copy_async");
    EXPECT_EQ(seen[0].struct_size, sizeof(xfer_copy_record));
    EXPECT_EQ(seen[0].ctx, ctx.get());
    EXPECT_EQ(seen[0].stream, s.get());
    EXPECT_EQ(seen[0].path, XFER_PATH_HOST_MEMCPY);
    EXPECT_EQ(seen[0].reason, XFER_REASON_MEMORY);
    EXPECT_EQ(seen[0].kind, XFER_COPY_HOST_TO_DEVICE);
    EXPECT_EQ(seen[0].slow, 0);
    EXPECT_EQ(seen[0].copies, 1u);
    EXPECT_EQ(seen[0].bytes, 5000u);
    EXPECT_EQ(seen[0].call_bytes, 5000u);
    EXPECT_EQ(functions[1], "xfer_copy");
    EXPECT_EQ(seen[1].stream, nullptr); // xfer_copy's own stream is no handle of the caller's
    EXPECT_EQ(seen[1].kind, XFER_COPY_DEVICE_TO_HOST);
    EXPECT_EQ(seen[1].bytes, 100u);
    EXPECT_EQ(functions[2], "xfer_memcpy_batch_async");
    EXPECT_EQ(seen[2].copies, 2u);
    EXPECT_EQ(seen[2].bytes, 250u);
    EXPECT_EQ(seen[2].kind, XFER_COPY_HOST_TO_HOST);
    EXPECT_EQ(dst[299], 1);

    ctx.set_copy_observer(nullptr);
    buf.copy(XFER_TO_DEVICE);
    EXPECT_EQ(seen.size(), 3u);
    EXPECT_EQ(ctx.stats().calls, 4u); // the statistics go on without an observer
    EXPECT_EQ(ctx.take_observer_exception(), nullptr);
}

// The context keeps the observer: a buffer whose Context variable is gone still reports to it.
TEST(XferHppPaths, ObserverOutlivesTheContextVariable) {
    auto bytes = std::make_shared<std::atomic<std::uint64_t>>(0);
    std::optional<xfer::Buffer> buf;
    xfer_context raw = nullptr;
    {
        xfer::Context ctx = host_ctx();
        raw = ctx.get();
        buf.emplace(ctx, 4096);
        ctx.set_copy_observer([bytes](const xfer_copy_record &r) { *bytes += r.bytes; });
    }
    buf->copy(XFER_TO_DEVICE, 0, 1234);
    buf->copy(XFER_TO_HOST, 0, 4096);
    EXPECT_EQ(bytes->load(), 1234u + 4096u);
    EXPECT_EQ(bytes.use_count(), 2); // ours and the observer's
    buf.reset();                     // the last share: the context closes, the observer goes
    EXPECT_FALSE(context_open(raw));
    EXPECT_EQ(bytes.use_count(), 1);
}

TEST(XferHppPaths, AnExceptionOfTheObserverStaysOutOfTheCopy) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer buf(ctx, 256);
    int calls = 0;
    ctx.set_copy_observer([&](const xfer_copy_record &r) {
        ++calls;
        throw std::runtime_error("observer saw " + std::to_string(r.bytes) + " bytes");
    });
    for (std::size_t i = 0; i < 256; ++i) buf.host()[i] = static_cast<unsigned char>(i);
    buf.copy(XFER_TO_DEVICE, 0, 200); // does not throw: the copy itself succeeded
    buf.copy(XFER_TO_DEVICE, 200, 56);
    EXPECT_EQ(calls, 2);
    for (std::size_t i = 0; i < 256; ++i) ASSERT_EQ(buf.device()[i], static_cast<unsigned char>(i)) << i;
    EXPECT_EQ(ctx.stats().paths[XFER_PATH_HOST_MEMCPY].bytes, 256u);
    std::exception_ptr e = ctx.take_observer_exception();
    ASSERT_NE(e, nullptr);
    try {
        std::rethrow_exception(e);
    } catch (const std::runtime_error &err) {
        EXPECT_STREQ(err.what(), "observer saw 56 bytes"); // the latest
    }
    EXPECT_EQ(ctx.take_observer_exception(), nullptr); // taken once
    // A throw of something that is no std::exception is caught as well.
    ctx.set_copy_observer([](const xfer_copy_record &) { throw 42; });
    buf.copy(XFER_TO_HOST);
    e = ctx.take_observer_exception();
    ASSERT_NE(e, nullptr);
    try {
        std::rethrow_exception(e);
    } catch (int v) {
        EXPECT_EQ(v, 42);
    }
}

TEST(XferHppPaths, ObserverMayCopyAndReplaceItselfAndRunsOnEveryThread) {
    xfer::Context ctx = host_ctx();
    xfer::Buffer buf(ctx, 64);
    int inner = 0;
    int outer = 0;
    // The observer copies (a call of its own, reported to the observer then current), then
    // replaces itself: the replacement sees the next calls.
    ctx.set_copy_observer([&](const xfer_copy_record &r) {
        ++outer;
        EXPECT_EQ(r.bytes, 64u);
        ctx.set_copy_observer([&](const xfer_copy_record &r2) {
            ++inner;
            EXPECT_EQ(r2.bytes, 8u);
        });
        buf.copy(XFER_TO_HOST, 0, 8);
    });
    buf.copy(XFER_TO_DEVICE);
    EXPECT_EQ(outer, 1);
    EXPECT_EQ(inner, 1);
    buf.copy(XFER_TO_HOST, 8, 8);
    EXPECT_EQ(outer, 1);
    EXPECT_EQ(inner, 2);
    EXPECT_EQ(ctx.take_observer_exception(), nullptr);

    constexpr int kThreads = 4, kCopies = 500;
    std::atomic<std::uint64_t> records{0}, bytes{0};
    ctx.set_copy_observer([&](const xfer_copy_record &r) {
        records += r.copies;
        bytes += r.bytes;
    });
    ctx.reset_stats();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            xfer::Buffer mine(ctx, 512);
            for (int i = 0; i < kCopies; ++i) mine.copy(XFER_TO_DEVICE, 0, 1 + i % 512);
        });
    for (std::thread &t : threads) t.join();
    std::uint64_t expect = 0;
    for (int i = 0; i < kCopies; ++i) expect += 1 + i % 512;
    EXPECT_EQ(records.load(), std::uint64_t{kThreads} * kCopies);
    EXPECT_EQ(bytes.load(), kThreads * expect);
    EXPECT_EQ(ctx.stats().paths[XFER_PATH_HOST_MEMCPY].bytes, kThreads * expect);
}

TEST(XferHppPaths, SlowPathPolicyIsSetAndRead) {
    xfer::Context ctx = host_ctx();
    EXPECT_EQ(ctx.slow_path(), XFER_SLOW_PATH_ALLOW);
    ctx.set_slow_path(XFER_SLOW_PATH_REFUSE);
    EXPECT_EQ(ctx.slow_path(), XFER_SLOW_PATH_REFUSE);
    // The host backend's memcpy is never slow: strict mode refuses none of its copies.
    xfer::Buffer buf(ctx, 4 * XFER_SLOW_PATH_MIN_BYTES);
    std::memset(buf.host(), 0x11, buf.bytes());
    buf.copy(XFER_TO_DEVICE);
    EXPECT_EQ(buf.device()[buf.bytes() - 1], 0x11);
    EXPECT_EQ(ctx.stats().refused_calls, 0u);
    ctx.set_slow_path(XFER_SLOW_PATH_WARN);
    EXPECT_EQ(ctx.slow_path(), XFER_SLOW_PATH_WARN);
    try {
        ctx.set_slow_path(static_cast<xfer_slow_path>(3));
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(std::string(e.what()).rfind("xfer_context_set_slow_path: XFER_ERROR_INVALID_ARGUMENT: ", 0), 0u)
            << e.what();
    }
    EXPECT_EQ(ctx.slow_path(), XFER_SLOW_PATH_WARN); // unchanged
    ctx.set_slow_path(XFER_SLOW_PATH_ALLOW);
    EXPECT_EQ(ctx.slow_path(), XFER_SLOW_PATH_ALLOW);
}

TEST(XferHppPaths, AClosedContextRefusesEveryCall) {
    xfer::Context ctx = host_ctx();
    EXPECT_TRUE(ctx.close());
    auto expect_invalid_handle = [](auto &&call, const char *what) {
        try {
            call();
            ADD_FAILURE() << what << ": no exception";
        } catch (const xfer::Error &e) {
            EXPECT_EQ(e.status(), XFER_ERROR_INVALID_HANDLE) << what << ": " << e.what();
        }
    };
    expect_invalid_handle([&] { (void)ctx.stats(); }, "stats");
    expect_invalid_handle([&] { ctx.reset_stats(); }, "reset_stats");
    expect_invalid_handle([&] { ctx.set_copy_observer([](const xfer_copy_record &) {}); }, "set_copy_observer");
    expect_invalid_handle([&] { (void)ctx.take_observer_exception(); }, "take_observer_exception");
    expect_invalid_handle([&] { ctx.set_slow_path(XFER_SLOW_PATH_REFUSE); }, "set_slow_path");
    expect_invalid_handle([&] { (void)ctx.slow_path(); }, "slow_path");
}

// Strict mode refusing for real needs a backend with slow paths: the core tests' mock plugin that
// reports them (a raw copy from 4 MiB goes half staged, half through the driver: slow), where
// the build has it (CMake names its folder in XFER_TEST_MOCK_PATHS_DIR).
TEST(XferHppPaths, RefuseThrowsSlowPathErrorAndCopiesNothing) {
#ifndef XFER_TEST_MOCK_PATHS_DIR
    GTEST_SKIP() << "this build has no mock plugin with slow paths (tests/core/mock_plugins)";
#else
    const char *dir = XFER_TEST_MOCK_PATHS_DIR;
    const char *old = std::getenv("XFER_PLUGIN_PATH");
    const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
    ASSERT_EQ(setenv("XFER_PLUGIN_PATH", dir, 1), 0);
    std::optional<xfer::Context> opened;
    try {
        opened.emplace("mockpaths", 0);
    } catch (const xfer::Error &e) {
        ADD_FAILURE() << e.what();
    }
    if (saved) {
        setenv("XFER_PLUGIN_PATH", saved->c_str(), 1);
    } else {
        unsetenv("XFER_PLUGIN_PATH");
    }
    ASSERT_TRUE(opened.has_value());
    xfer::Context &ctx = *opened;
    xfer::Stream s(ctx);
    const std::size_t big = 8 * XFER_SLOW_PATH_MIN_BYTES;
    std::vector<unsigned char> src(big, 0x5a), dst(big, 0);
    std::vector<xfer_copy_record> seen;
    ctx.set_copy_observer([&](const xfer_copy_record &r) { seen.push_back(r); });
    ctx.set_slow_path(XFER_SLOW_PATH_REFUSE);
    try {
        ctx.memcpy_async(dst.data(), src.data(), big, XFER_COPY_HOST_TO_DEVICE, s);
        FAIL() << "no exception";
    } catch (const xfer::Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_SLOW_PATH);
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("xfer_memcpy_async: XFER_ERROR_SLOW_PATH: ", 0), 0u) << what;
        EXPECT_NE(what.find("driver_pageable"), std::string::npos) << what;
    }
    EXPECT_EQ(dst[0], 0);
    EXPECT_EQ(dst[big - 1], 0);
    EXPECT_TRUE(seen.empty());
    xfer_context_stats st = ctx.stats();
    EXPECT_EQ(st.refused_calls, 1u);
    EXPECT_EQ(st.calls, 0u);
    // Allowed, the same copy goes, counted as slow, and the observer hears of its two pieces.
    ctx.set_slow_path(XFER_SLOW_PATH_ALLOW);
    ctx.memcpy_async(dst.data(), src.data(), big, XFER_COPY_HOST_TO_DEVICE, s);
    s.synchronize();
    EXPECT_EQ(dst[big - 1], 0x5a);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].path, XFER_PATH_STAGED);
    EXPECT_EQ(seen[1].path, XFER_PATH_DRIVER_PAGEABLE);
    EXPECT_EQ(seen[1].reason, XFER_REASON_NO_FASTER_PATH);
    EXPECT_EQ(seen[1].slow, 1);
    EXPECT_EQ(seen[1].bytes, big / 2);
    st = ctx.stats();
    EXPECT_EQ(st.slow_copies, 1u);
    EXPECT_EQ(st.paths[XFER_PATH_STAGED].bytes, big / 2);
    EXPECT_EQ(st.paths[XFER_PATH_DRIVER_PAGEABLE].bytes, big / 2);
#endif
}

} // namespace

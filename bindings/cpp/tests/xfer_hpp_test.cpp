// SPDX-License-Identifier: Apache-2.0
// The C++ layer on the host backend: bytes round-tripped and compared, errors carry status and
// message, handles are move-only and released exactly once, objects keep their context open
// after the Context variable is gone. Built as C++17 and as C++20.
#include <cstdint>
#include <numeric>
#include <optional>
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

} // namespace

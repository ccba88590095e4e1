// SPDX-License-Identifier: Apache-2.0
// The C++ layer on the host backend: bytes round-tripped and compared, errors carry status and
// message, handles are move-only and released exactly once. Built as C++17 and as C++20.
#include <cstdint>
#include <numeric>
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
    // xfer_close unregisters what is left; the Registration then has nothing to do.
    xfer::Registration reg = ctx.register_memory(data);
    EXPECT_EQ(ctx.registration_stats().registered_ranges, 1u);
    ctx.close();
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
    ctx.close();
    EXPECT_EQ(ctx.get(), nullptr);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
// The memory observer: one event per buffer allocated, imported and released (xfer_free and
// xfer_close) and per range registered and unregistered, with the pointers and sizes another
// library's registration cache needs, a release told while the memory is still there, and
// nothing once the observer is removed.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "share_patterns.hpp"
#include "xfer_test/status.hpp"
#include <xfer/xfer.h>

namespace xfer::test::share {
namespace {

struct Seen {
    std::vector<xfer_memory_event> events;
    std::vector<unsigned char> first_byte_at_release; // read inside the callback
    static void observe(const xfer_memory_event *e, void *self) {
        auto *me = static_cast<Seen *>(self);
        me->events.push_back(*e);
        if (e->event == XFER_MEMORY_RELEASING) {
            me->first_byte_at_release.push_back(*static_cast<const unsigned char *>(e->host_ptr));
        }
    }
};

class MemoryEvents : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_XFER(XFER_SUCCESS, xfer_open("host", 0, &ctx_)); }
    void TearDown() override {
        if (ctx_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx_));
    }
    xfer_context ctx_ = nullptr;
};

TEST_F(MemoryEvents, EveryBufferAndRangeIsToldWithItsPointersAndSize) {
    Seen seen;
    ASSERT_XFER(XFER_SUCCESS, xfer_set_memory_observer(ctx_, &Seen::observe, &seen));
    xfer_buffer a = nullptr, shared = nullptr, imported = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, 4096, XFER_ALLOC_DEFAULT, &a));
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, kBytes, XFER_ALLOC_SHAREABLE, &shared));
    xfer_export e{};
    e.struct_size = sizeof e;
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_export(shared, &e));
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_import(ctx_, &e, &imported));
    xfer_export_close(&e);
    std::vector<unsigned char> range(3 * 4096);
    ASSERT_XFER(XFER_SUCCESS, xfer_register(ctx_, range.data(), range.size(), XFER_REGISTER_DEFAULT));
    std::memset(xfer_host_ptr(a), 0x7e, 4096);
    ASSERT_XFER(XFER_SUCCESS, xfer_free(a));
    ASSERT_XFER(XFER_SUCCESS, xfer_unregister(ctx_, range.data()));

    ASSERT_EQ(seen.events.size(), 6u);
    const auto is = [&](std::size_t i, xfer_memory_event_kind kind, xfer_buffer b, void *host, std::size_t bytes,
                        int was_imported) {
        const xfer_memory_event &ev = seen.events[i];
        EXPECT_EQ(ev.struct_size, sizeof(xfer_memory_event)) << i;
        EXPECT_EQ(ev.ctx, ctx_) << i;
        EXPECT_EQ(ev.event, kind) << i;
        EXPECT_EQ(ev.buffer, b) << i;
        EXPECT_EQ(ev.host_ptr, host) << i;
        EXPECT_EQ(ev.bytes, bytes) << i;
        EXPECT_EQ(ev.imported, was_imported) << i;
    };
    is(0, XFER_MEMORY_ALLOCATED, a, seen.events[0].host_ptr, 4096, 0);
    EXPECT_NE(seen.events[0].host_ptr, nullptr);
    EXPECT_NE(seen.events[0].device_ptr, nullptr);
    is(1, XFER_MEMORY_ALLOCATED, shared, xfer_host_ptr(shared), kBytes, 0);
    EXPECT_EQ(seen.events[1].device_ptr, xfer_device_ptr(shared));
    is(2, XFER_MEMORY_ALLOCATED, imported, xfer_host_ptr(imported), kBytes, 1);
    is(3, XFER_MEMORY_REGISTERED, nullptr, range.data(), range.size(), 0);
    EXPECT_EQ(seen.events[3].device_ptr, nullptr);
    is(4, XFER_MEMORY_RELEASING, a, seen.events[0].host_ptr, 4096, 0);
    is(5, XFER_MEMORY_UNREGISTERING, nullptr, range.data(), range.size(), 0);
    ASSERT_EQ(seen.first_byte_at_release.size(), 1u);
    EXPECT_EQ(seen.first_byte_at_release[0], 0x7e); // told before the memory went

    // xfer_close tells the release of every buffer it frees, then the observer hears nothing.
    ASSERT_XFER(XFER_SUCCESS, xfer_close(ctx_));
    ctx_ = nullptr;
    ASSERT_EQ(seen.events.size(), 8u);
    int released = 0;
    for (std::size_t i = 6; i < 8; ++i) {
        EXPECT_EQ(seen.events[i].event, XFER_MEMORY_RELEASING);
        released += seen.events[i].buffer == shared || seen.events[i].buffer == imported;
    }
    EXPECT_EQ(released, 2);
}

TEST_F(MemoryEvents, ARemovedObserverHearsNothingAndBadHandlesAreRefused) {
    Seen seen;
    ASSERT_XFER(XFER_SUCCESS, xfer_set_memory_observer(ctx_, &Seen::observe, &seen));
    ASSERT_XFER(XFER_SUCCESS, xfer_set_memory_observer(ctx_, nullptr, nullptr));
    xfer_buffer b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, 4096, XFER_ALLOC_DEFAULT, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_free(b));
    EXPECT_TRUE(seen.events.empty());
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_set_memory_observer(nullptr, &Seen::observe, &seen));
    // An unregistration the backend refuses (not a registered range) is not told.
    std::vector<unsigned char> never(4096);
    ASSERT_XFER(XFER_SUCCESS, xfer_set_memory_observer(ctx_, &Seen::observe, &seen));
    EXPECT_NE(xfer_unregister(ctx_, never.data()), XFER_SUCCESS);
    EXPECT_TRUE(seen.events.empty());
}

} // namespace
} // namespace xfer::test::share

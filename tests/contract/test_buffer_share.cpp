// SPDX-License-Identifier: Apache-2.0
// Shareable buffers on every backend: a backend that exports makes an XFER_ALLOC_SHAREABLE
// buffer, exports it and imports it on a second context, the bytes the same memory; one that
// does not refuses the flag with XFER_ERROR_NOT_SUPPORTED, allocates nothing and tells the memory
// observer nothing. Either way the memory observer hears of the plain buffers.
#include <cstring>
#include <string>
#include <vector>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class BufferShare : public ContractTest {};

struct Events {
    std::vector<xfer_memory_event_kind> seen;
    static void observe(const xfer_memory_event *e, void *self) {
        static_cast<Events *>(self)->seen.push_back(e->event);
    }
};

TEST_P(BufferShare, AShareableBufferIsExportedOrRefusedCleanly) {
    Events events;
    ASSERT_XFER_OK(xfer_set_memory_observer(ctx_, &Events::observe, &events));
    const std::size_t bytes = 1u << 20;
    xfer_buffer b = nullptr;
    const xfer_status st = xfer_alloc(ctx_, bytes, XFER_ALLOC_SHAREABLE, &b);
    if (st == XFER_ERROR_NOT_SUPPORTED) {
        EXPECT_EQ(b, nullptr);
        EXPECT_NE(std::string(xfer_last_error()).find("XFER_ALLOC_SHAREABLE"), std::string::npos) << xfer_last_error();
        EXPECT_TRUE(events.seen.empty()) << "a refused allocation was told to the observer";
        xfer_buffer plain = alloc(4096);
        ASSERT_NE(plain, nullptr);
        ASSERT_XFER_OK(xfer_free(plain));
        EXPECT_EQ(events.seen, (std::vector<xfer_memory_event_kind>{XFER_MEMORY_ALLOCATED, XFER_MEMORY_RELEASING}));
        return;
    }
    ASSERT_XFER_OK(st);
    const Bytes data = random_bytes(bytes, 905);
    std::memcpy(xfer_host_ptr(b), data.data(), bytes);
    xfer_export e{};
    e.struct_size = sizeof e;
    ASSERT_XFER_OK(xfer_buffer_export(b, &e));
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &other));
    xfer_buffer imported = nullptr;
    ASSERT_XFER_OK(xfer_buffer_import(other, &e, &imported));
    xfer_export_close(&e);
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(imported), data.data(), bytes));
    ASSERT_XFER_OK(xfer_copy(imported, XFER_TO_DEVICE, 0, bytes));
    if (!shared_view()) std::memset(xfer_host_ptr(b), 0, bytes);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, bytes));
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(b), data.data(), bytes)); // through the import's device view
    EXPECT_XFER_OK(xfer_free(imported));
    EXPECT_XFER_OK(xfer_close(other));
    EXPECT_XFER_OK(xfer_free(b));
    EXPECT_EQ(events.seen, (std::vector<xfer_memory_event_kind>{XFER_MEMORY_ALLOCATED, XFER_MEMORY_RELEASING}));
}

XFER_CONTRACT_SUITE(BufferShare);

} // namespace
} // namespace xfer::test::contract

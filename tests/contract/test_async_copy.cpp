// SPDX-License-Identifier: Apache-2.0
// Backends with XFER_CAP_ASYNC_COPY (host, pinned, managed) promise more than stream order: a buffer
// copy is queued and xfer_copy_async returns before it has run. Backends without the cap may
// return only once the copy is done or queued (pageable with staging = sync), so this suite runs
// only where the cap is set.
#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class AsyncCopy : public ContractTest {};

TEST_P(AsyncCopy, CopyAsyncReturnsBeforeTheCopyIsDone) {
    ASSERT_NE(info_.caps & XFER_CAP_ASYNC_COPY, 0u);
    const std::size_t bytes = 1 << 20;
    xfer_buffer b = alloc(bytes);
    xfer_stream held = new_stream();
    ASSERT_NE(b, nullptr);
    ASSERT_NE(held, nullptr);
    const Bytes old_bytes = random_bytes(bytes, 801);
    ASSERT_TRUE(write_device(b, 0, old_bytes));
    const Bytes data = random_bytes(bytes, 802);
    write_host(b, 0, data);

    HostGate &gate = new_gate();
    ASSERT_XFER_OK(gate.block(held));
    // With the stream held by the gate, the call can only return if it does not wait.
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, held));
    EXPECT_EQ(xfer_stream_query(held), XFER_ERROR_NOT_READY);
    if (!shared_view()) {
        // Read through another stream: the device view still holds the old bytes.
        Bytes device;
        ASSERT_TRUE(read_device(b, 0, bytes, &device));
        EXPECT_TRUE(same_bytes(old_bytes, device)) << "the copy ran before the work queued ahead of it";
    }
    gate.open();
    ASSERT_XFER_OK(xfer_stream_synchronize(held));
    EXPECT_XFER_OK(xfer_stream_query(held));
    EXPECT_FALSE(gate.timed_out()) << "the gate opened by its time limit: xfer_copy_async waited for the stream";
    Bytes device;
    ASSERT_TRUE(read_device(b, 0, bytes, &device));
    EXPECT_TRUE(same_bytes(data, device));
}

INSTANTIATE_TEST_SUITE_P(Contract, AsyncCopy, ::testing::ValuesIn(async_copy_backends_under_test()), backend_test_name);
// A machine where no backend under test has the cap (e.g. only pageable was asked for) runs
// none of these; that is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AsyncCopy);

} // namespace
} // namespace xfer::test::contract

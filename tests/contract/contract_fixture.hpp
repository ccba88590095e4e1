// SPDX-License-Identifier: Apache-2.0
// The fixture every contract test runs in: a context on the backend under test (the test
// parameter) and one stream, closed after the test. Helpers move data without kernels, so one
// test body is valid on every backend.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "contract_backends.hpp"
#include "host_gate.hpp"
#include <xfer/xfer.h>
#include <xfer_test/support.hpp>

namespace xfer::test::contract {

class ContractTest : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override;
    // Opens every gate, then closes the context (which synchronises its streams), so no
    // queued host function outlives the objects it uses.
    void TearDown() override;

    const std::string &backend() const { return GetParam(); }
    // Host view and device view are one memory (managed, zero-copy): writing one view is
    // writing the other, so "clear the host view, copy back" cannot prove anything there.
    bool shared_view() const { return (info_.caps & XFER_CAP_SHARED_VIEW) != 0; }

    // A buffer of `bytes` on ctx_ (nullptr and a test failure if allocation fails).
    xfer_buffer alloc(std::size_t bytes, unsigned flags = XFER_ALLOC_DEFAULT);
    xfer_stream new_stream();
    xfer_event new_event(unsigned flags = XFER_EVENT_DEFAULT);
    HostGate &new_gate();

    // Keeps an object alive until after TearDown, for host functions that still point at it
    // when an assertion ends the test early.
    template <class T, class... Args>
    T &keep(Args &&...args) {
        auto object = std::make_shared<T>(std::forward<Args>(args)...);
        kept_.push_back(object);
        return *object;
    }

    // The views read and written from the host. The device view is reached with
    // xfer_memcpy_async (H2D / D2H) on stream `s` (stream_ when NULL), then synchronised: no
    // kernel needed, so this works on every backend.
    void write_host(xfer_buffer b, std::size_t offset, const Bytes &data);
    Bytes read_host(xfer_buffer b, std::size_t offset, std::size_t bytes);
    ::testing::AssertionResult write_device(xfer_buffer b, std::size_t offset, const Bytes &data,
                                            xfer_stream s = nullptr);
    ::testing::AssertionResult read_device(xfer_buffer b, std::size_t offset, std::size_t bytes, Bytes *out,
                                           xfer_stream s = nullptr);

    // Full round trip of `data` through `b` on `s`: host view -> device view (checked there),
    // host view cleared (unless shared_view()), device view -> host view, compared.
    ::testing::AssertionResult round_trip(xfer_buffer b, const Bytes &data, xfer_stream s);

    xfer_context ctx_ = nullptr;
    xfer_stream stream_ = nullptr;
    xfer_context_info info_{};

  private:
    std::vector<std::shared_ptr<HostGate>> gates_;
    std::vector<std::shared_ptr<void>> kept_;
};

// Checks that `call` fails with `expected`, that xfer_last_error() then holds a message set
// by this call (not left over from an earlier one), and that the message mentions every word
// of `mentions` (case-insensitive).
::testing::AssertionResult fails_with(const std::function<xfer_status()> &call, xfer_status expected,
                                      std::initializer_list<const char *> mentions);
// The same for a call that reports failure by returning NULL / 0 (xfer_host_ptr, ...).
::testing::AssertionResult yields_null(const std::function<const void *()> &call,
                                       std::initializer_list<const char *> mentions);

// Test names end with the backend: Buffers/BufferCopy.RoundTrip/pinned.
std::string backend_test_name(const ::testing::TestParamInfo<std::string> &info);

} // namespace xfer::test::contract

#define EXPECT_XFER_FAILS(call, status, ...)                                                                           \
    EXPECT_TRUE(::xfer::test::contract::fails_with([&] { return (call); }, (status), __VA_ARGS__)) << #call

// Runs every TEST_P of `suite` (a subclass of ContractTest) on every backend under test.
#define XFER_CONTRACT_SUITE(suite)                                                                                     \
    INSTANTIATE_TEST_SUITE_P(Contract, suite, ::testing::ValuesIn(::xfer::test::contract::backends_under_test()),      \
                             ::xfer::test::contract::backend_test_name)

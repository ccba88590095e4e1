// SPDX-License-Identifier: Apache-2.0
// Several threads using one context at once, each with its own stream and buffer.
#include <thread>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Concurrency : public ContractTest {};

TEST_P(Concurrency, FourThreadsEachDoTwentyRoundTrips) {
    const int threads = 4, trips = 20;
    std::vector<std::string> failures(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            // Results are collected, not asserted here: gtest's fatal assertions belong to
            // the test's own thread.
            xfer_stream s = nullptr;
            xfer_buffer b = nullptr;
            const std::size_t bytes = 100000 + 4099 * t;
            if (xfer_stream_create(ctx_, &s) != XFER_SUCCESS || xfer_alloc(ctx_, bytes, 0, &b) != XFER_SUCCESS) {
                failures[t] = std::string("setup: ") + xfer_last_error();
                return;
            }
            for (int i = 0; i < trips && failures[t].empty(); ++i) {
                auto result = round_trip(b, random_bytes(bytes, 1000 * t + i), s);
                if (!result) {
                    failures[t] = "round trip " + std::to_string(i) + ": " + result.message();
                }
            }
            if (xfer_free(b) != XFER_SUCCESS || xfer_stream_destroy(s) != XFER_SUCCESS) {
                failures[t] += std::string(" cleanup: ") + xfer_last_error();
            }
        });
    }
    for (auto &w : workers) {
        w.join();
    }
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(failures[t], "") << "thread " << t;
    }
}

TEST_P(Concurrency, ThreadsShareOneStream) {
    // Handles may be shared: four threads queue copies of their own buffers on one stream.
    const int threads = 4;
    const std::size_t bytes = 50000;
    std::vector<xfer_buffer> buffers(threads);
    std::vector<Bytes> data(threads);
    for (int t = 0; t < threads; ++t) {
        buffers[t] = alloc(bytes);
        ASSERT_NE(buffers[t], nullptr);
        data[t] = random_bytes(bytes, 2000 + t);
        write_host(buffers[t], 0, data[t]);
    }
    std::vector<xfer_status> statuses(threads, XFER_ERROR_INTERNAL);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] { statuses[t] = xfer_copy_async(buffers[t], XFER_TO_DEVICE, 0, bytes, stream_); });
    }
    for (auto &w : workers) {
        w.join();
    }
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    for (int t = 0; t < threads; ++t) {
        EXPECT_EQ(statuses[t], XFER_SUCCESS) << "thread " << t;
        Bytes device;
        ASSERT_TRUE(read_device(buffers[t], 0, bytes, &device));
        EXPECT_TRUE(same_bytes(data[t], device)) << "thread " << t;
    }
}

XFER_CONTRACT_SUITE(Concurrency);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Which path each copy took, on the GPU, exactly: the known mix of copy_mix.hpp on each CUDA
// backend, every counter of the statistics checked against the path that backend's strategy
// takes, every byte compared, the observer's reasons checked. Then the slow-path policy on real
// pageable copies: refused with XFER_ERROR_SLOW_PATH, the message naming the path and why,
// nothing queued (the device bytes unchanged) and nothing registered.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "copy_mix.hpp"
#include "gpu_fixture.hpp"

namespace xfer::test {
namespace {

using namespace copy_mix;

struct Records {
    std::vector<xfer_copy_record> seen;
    static void observe(const xfer_copy_record *r, void *self) { static_cast<Records *>(self)->seen.push_back(*r); }
};

class GpuCopyPaths : public GpuBackendTest {
  protected:
    void TearDown() override {
        GpuBackendTest::TearDown(); // the context closes (and unregisters) before the memory goes
        ctx_ = nullptr;
        for (void *d : device_) (void)cudaFree(d);
    }
    xfer_context_stats stats() {
        xfer_context_stats s{};
        s.struct_size = sizeof s;
        EXPECT_XFER_OK(xfer_context_get_stats(ctx_, &s));
        return s;
    }
    void *device(std::size_t bytes) {
        void *d = nullptr;
        EXPECT_EQ(cudaSuccess, cudaMalloc(&d, bytes));
        device_.push_back(d);
        return d;
    }
    Bytes read_device(const void *d, std::size_t bytes) {
        Bytes out(bytes);
        EXPECT_EQ(cudaSuccess, cudaMemcpy(out.data(), d, bytes, cudaMemcpyDeviceToHost));
        return out;
    }
    void sync() { ASSERT_XFER_OK(xfer_stream_synchronize(stream_)); }

    Thresholds thresholds_; // before SetUp opens the context
    std::vector<void *> device_;
    Mix mix_;
    UserMemory user_again_{kMid};
};

TEST_P(GpuCopyPaths, EveryCounterOfAKnownMixOfCopiesIsExact) {
    ASSERT_NO_FATAL_FAILURE(mix_.prepare(ctx_, shared_view()));
    ASSERT_XFER_OK(xfer_context_reset_stats(ctx_));
    Records records;
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, &Records::observe, &records));
    ASSERT_NO_FATAL_FAILURE(mix_.run(stream_));
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, nullptr, nullptr));
    mix_.verify();

    const xfer_context_stats s = stats();
    const PathTable want = expected_paths(GetParam());
    EXPECT_EQ(s.calls, kCalls);
    EXPECT_EQ(s.refused_calls, 0u);
    EXPECT_EQ(s.slow_copies, expected_slow_copies(GetParam()));
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        const auto path = static_cast<xfer_copy_path>(p);
        const auto it = want.find(path);
        const PathCount w = it == want.end() ? PathCount{0, 0} : it->second;
        EXPECT_EQ(s.paths[p].copies, w.copies) << GetParam() << ": copies on " << xfer_copy_path_name(path);
        EXPECT_EQ(s.paths[p].bytes, w.bytes) << GetParam() << ": bytes on " << xfer_copy_path_name(path);
        if (w.copies > 0) {
            EXPECT_GT(s.paths[p].host_ns, 0u) << GetParam() << ": host time on " << xfer_copy_path_name(path);
        }
    }
    if (GetParam() == "pinned") {
        EXPECT_EQ(s.registrations, 2u);
        EXPECT_EQ(s.registered_bytes, 2 * kMid);
    } else {
        EXPECT_EQ(s.registrations, 0u);
    }

    // The observer saw the same: one record per path of each call, the reasons of the strategy.
    ASSERT_GE(records.seen.size(), kCalls);
    std::uint64_t observed = 0;
    for (const xfer_copy_record &r : records.seen) observed += r.bytes;
    EXPECT_EQ(observed, kBytes);
    std::vector<xfer_path_reason> raw_user_reasons; // the three malloc copies, in call order
    for (const xfer_copy_record &r : records.seen) {
        if (r.call_bytes == kMid) raw_user_reasons.push_back(r.reason);
    }
    ASSERT_EQ(raw_user_reasons.size(), 3u);
    if (GetParam() == "pinned") {
        EXPECT_EQ(raw_user_reasons[0], XFER_REASON_FIRST_USE);
        EXPECT_EQ(raw_user_reasons[1], XFER_REASON_CACHE_HIT);
        EXPECT_EQ(raw_user_reasons[2], XFER_REASON_FIRST_USE);
    } else if (GetParam() == "pageable") {
        EXPECT_EQ(raw_user_reasons[0], XFER_REASON_BELOW_CROSSOVER);
        EXPECT_EQ(raw_user_reasons[1], XFER_REASON_BELOW_CROSSOVER);
        EXPECT_EQ(raw_user_reasons[2], XFER_REASON_MEMORY); // staged
    } else {
        for (xfer_path_reason why : raw_user_reasons) EXPECT_EQ(why, XFER_REASON_NO_FASTER_PATH);
    }

    ASSERT_XFER_OK(xfer_context_reset_stats(ctx_));
    const xfer_context_stats cleared = stats();
    for (int p = 0; p < XFER_PATH_COUNT; ++p) EXPECT_EQ(cleared.paths[p].copies, 0u);
    EXPECT_EQ(cleared.calls, 0u);
}

TEST_P(GpuCopyPaths, RefuseStopsARealSlowCopyBeforeAnythingIsQueuedOrRegistered) {
    void *dev = device(kMid);
    const Bytes before = random_bytes(kMid, fresh_seed());
    ASSERT_EQ(cudaSuccess, cudaMemcpy(dev, before.data(), kMid, cudaMemcpyHostToDevice));
    std::memset(user_again_.p, 0x3c, kMid);
    ASSERT_XFER_OK(xfer_context_set_slow_path(ctx_, XFER_SLOW_PATH_REFUSE));
    const xfer_status st = xfer_memcpy_async(ctx_, dev, user_again_.p, kMid, XFER_COPY_HOST_TO_DEVICE, stream_);
    sync();
    const xfer_context_stats s = stats();
    if (GetParam() == "pageable") {
        // 8 MiB to the device is below its crossover: the driver's copy is the fastest path, so
        // never slow; a copy the stager declines for want of room would be.
        EXPECT_XFER_OK(st);
        EXPECT_EQ(s.refused_calls, 0u);
        EXPECT_EQ(read_device(dev, kMid), Bytes(kMid, 0x3c));
        return;
    }
    ASSERT_EQ(st, XFER_ERROR_SLOW_PATH) << xfer_last_error();
    const std::string m = xfer_last_error();
    EXPECT_NE(m.find("xfer_memcpy_async"), std::string::npos) << m;
    EXPECT_NE(m.find(GetParam() == "pinned" ? "new_registration" : "driver_pageable"), std::string::npos) << m;
    EXPECT_NE(m.find(GetParam()), std::string::npos) << m; // the backend
    EXPECT_NE(m.find("nothing was queued"), std::string::npos) << m;
    std::printf("[ refused  ] %s\n", m.c_str()); // the message a user meets, in the proof's log
    EXPECT_EQ(read_device(dev, kMid), before) << "a refused copy moved bytes";
    EXPECT_EQ(s.refused_calls, 1u);
    EXPECT_EQ(s.calls, 0u);
    EXPECT_EQ(s.registrations, 0u) << "a refused copy left a registration behind";
    xfer_registration_stats r{};
    ASSERT_XFER_OK(xfer_registration_get_stats(ctx_, &r));
    EXPECT_EQ(r.cache_ranges, 0u);
    // Made fast by the user (a registration), the same copy goes through under refuse.
    ASSERT_XFER_OK(xfer_register(ctx_, user_again_.p, kMid, XFER_REGISTER_DEFAULT));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, dev, user_again_.p, kMid, XFER_COPY_HOST_TO_DEVICE, stream_));
    sync();
    EXPECT_EQ(read_device(dev, kMid), Bytes(kMid, 0x3c));
    ASSERT_XFER_OK(xfer_unregister(ctx_, user_again_.p));
    EXPECT_EQ(stats().refused_calls, 1u);
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuCopyPaths, ::testing::ValuesIn(kCudaBackends), param_name);

} // namespace
} // namespace xfer::test

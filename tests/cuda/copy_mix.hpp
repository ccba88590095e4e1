// SPDX-License-Identifier: Apache-2.0
// One known mix of copies and the paths each CUDA backend's strategy takes for it, for the tests
// that check xfer's path statistics against what happened (gpu_copy_paths_test: exact counters;
// gpu_cupti_paths_test: the copies CUPTI saw the driver make). The mix: a buffer's own copies to
// the device (small, then whole) and back, raw copies from page-locked and between device
// memory, and raw copies of malloc memory (the same range twice to the device, another to the
// host). The thresholds the strategies decide by are named (Thresholds), so that a change of
// the declared defaults does not change what the tests check.
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "test_support.hpp"
#include <xfer/xfer.h>

namespace xfer::test::copy_mix {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kBig = 32 * kMiB; // a buffer's copies: above both staging thresholds
constexpr std::size_t kMid = 8 * kMiB;  // raw user copies: between them, above XFER_SLOW_PATH_MIN_BYTES
constexpr std::size_t kOne = 1 * kMiB;  // page-locked and device-to-device raw copies
constexpr std::size_t kSmall = 4096;    // a small buffer copy
constexpr std::size_t kPage = 4096;
constexpr std::uint64_t kCalls = 8;
constexpr std::uint64_t kBytes = kSmall + 2 * kBig + 2 * kOne + 3 * kMid;

// The thresholds the expected paths follow, set for the contexts opened while this lives.
struct Thresholds {
    EnvGuard staged_min{"XFER_PAGEABLE_STAGED_MIN_BYTES", "16777216"};
    EnvGuard staged_min_to_host{"XFER_PAGEABLE_STAGED_MIN_BYTES_TO_HOST", "4194304"};
    EnvGuard staging{"XFER_PAGEABLE_STAGING", "async"};
    EnvGuard registration_min{"XFER_PINNED_REGISTRATION_MIN", "1048576"};
    EnvGuard managed_to_host{"XFER_MANAGED_TO_HOST", "prefetch"};
    EnvGuard policy{"XFER_SLOW_PATH", nullptr};
    EnvGuard calibration{"XFER_CALIBRATION", "off"}; // the declared defaults decide
};

struct PathCount {
    std::uint64_t copies, bytes;
};
using PathTable = std::map<xfer_copy_path, PathCount>;

// What each backend's strategy does with the mix, path by path.
inline PathTable expected_paths(const std::string &backend) {
    const std::uint64_t buffer_bytes = kSmall + 2 * kBig;
    if (backend == "pinned") {
        return {{XFER_PATH_PINNED_DMA, {4, buffer_bytes + kOne}}, // the buffer's copies, cudaMallocHost memory
                {XFER_PATH_DEVICE_COPY, {1, kOne}},
                {XFER_PATH_NEW_REGISTRATION, {2, 2 * kMid}}, // each malloc range's first copy
                {XFER_PATH_CACHED_REGISTRATION, {1, kMid}}}; // the same range again
    }
    if (backend == "pageable") {
        return {{XFER_PATH_STAGED, {3, 2 * kBig + kMid}},            // the buffer both ways, raw to the host
                {XFER_PATH_DRIVER_PAGEABLE, {3, kSmall + 2 * kMid}}, // below the to-device threshold
                {XFER_PATH_PINNED_DMA, {1, kOne}},
                {XFER_PATH_DEVICE_COPY, {1, kOne}}};
    }
    const xfer_copy_path own = backend == "managed" ? XFER_PATH_MANAGED_MIGRATE : XFER_PATH_MAPPED;
    return {{own, {3, buffer_bytes}},
            {XFER_PATH_DRIVER_PAGEABLE, {3, 3 * kMid}}, // no faster path for malloc memory here
            {XFER_PATH_PINNED_DMA, {1, kOne}},
            {XFER_PATH_DEVICE_COPY, {1, kOne}}};
}

inline std::uint64_t expected_slow_copies(const std::string &backend) {
    if (backend == "pageable") return 0; // its driver copies are below the crossover, never slow
    return backend == "pinned" ? 2 : 3;  // the fresh registrations; the driver's pageable copies
}

// Page-aligned malloc memory (the registration cache locks whole pages: aligned, its counted
// bytes are the copy's bytes exactly).
struct UserMemory {
    explicit UserMemory(std::size_t bytes) : p(static_cast<unsigned char *>(std::aligned_alloc(kPage, bytes))) {}
    ~UserMemory() { std::free(p); }
    UserMemory(const UserMemory &) = delete;
    UserMemory &operator=(const UserMemory &) = delete;
    unsigned char *p;
};

// The mix's memory and its copies. Destroy it after the context closed (the registration cache
// unregisters the malloc ranges at close).
class Mix {
  public:
    Mix() = default;
    Mix(const Mix &) = delete;
    Mix &operator=(const Mix &) = delete;
    ~Mix() {
        for (void *d : device_) (void)cudaFree(d);
        if (pinned_host_ != nullptr) (void)cudaFreeHost(pinned_host_);
    }

    // Allocates and fills everything (nothing of it is a copy the mix counts).
    void prepare(xfer_context ctx, bool shared_view) {
        ctx_ = ctx;
        shared_view_ = shared_view;
        ASSERT_EQ(XFER_SUCCESS, xfer_alloc(ctx, kBig, XFER_ALLOC_DEFAULT, &buffer_)) << xfer_last_error();
        data_ = random_bytes(kBig, fresh_seed());
        std::memcpy(xfer_host_ptr(buffer_), data_.data(), kBig);
        for (std::size_t bytes : {kBig, kOne}) {
            void *d = nullptr;
            ASSERT_EQ(cudaSuccess, cudaMalloc(&d, bytes));
            device_.push_back(d);
        }
        ASSERT_EQ(cudaSuccess, cudaMallocHost(&pinned_host_, kOne));
        locked_ = random_bytes(kOne, fresh_seed());
        std::memcpy(pinned_host_, locked_.data(), kOne);
        user_ = random_bytes(kMid, fresh_seed());
        std::memcpy(user_in_.p, user_.data(), kMid);
        std::memset(user_out_.p, 0, kMid);
        ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    }

    // The kCalls copies, each waited for. The copies to the device come first: a copy to the
    // host leaves a pageable stream "at risk" of host writes, which sends later small copies of
    // the pageable backend through its stager.
    void run(xfer_stream s) {
        void *dev_a = device_[0];
        void *dev_b = device_[1];
        const auto sync = [&] { ASSERT_EQ(XFER_SUCCESS, xfer_stream_synchronize(s)) << xfer_last_error(); };
        const auto ok = [](xfer_status st) { ASSERT_EQ(XFER_SUCCESS, st) << xfer_last_error(); };
        ok(xfer_copy_async(buffer_, XFER_TO_DEVICE, 0, kSmall, s));
        sync();
        ok(xfer_copy_async(buffer_, XFER_TO_DEVICE, 0, kBig, s));
        sync();
        ok(xfer_memcpy_async(ctx_, dev_a, pinned_host_, kOne, XFER_COPY_HOST_TO_DEVICE, s));
        sync();
        ok(xfer_memcpy_async(ctx_, dev_b, dev_a, kOne, XFER_COPY_DEVICE_TO_DEVICE, s));
        sync();
        for (int i = 0; i < 2; ++i) {
            ok(xfer_memcpy_async(ctx_, dev_a, user_in_.p, kMid, XFER_COPY_HOST_TO_DEVICE, s));
            sync();
        }
        ok(xfer_memcpy_async(ctx_, user_out_.p, dev_a, kMid, XFER_COPY_DEVICE_TO_HOST, s));
        sync();
        if (!shared_view_) std::memset(xfer_host_ptr(buffer_), 0, kBig);
        ok(xfer_copy_async(buffer_, XFER_TO_HOST, 0, kBig, s));
        sync();
    }

    // Every byte arrived (read back by the CUDA runtime where xfer did not copy it back).
    void verify() const {
        EXPECT_EQ(0, std::memcmp(xfer_host_ptr(buffer_), data_.data(), kBig)) << "the buffer's round trip";
        EXPECT_EQ(0, std::memcmp(user_out_.p, user_.data(), kMid)) << "the malloc memory's round trip";
        Bytes back(kOne);
        ASSERT_EQ(cudaSuccess, cudaMemcpy(back.data(), device_[1], kOne, cudaMemcpyDeviceToHost));
        EXPECT_EQ(back, locked_) << "page-locked memory through two device copies";
    }

  private:
    xfer_context ctx_ = nullptr;
    bool shared_view_ = false;
    xfer_buffer buffer_ = nullptr; // freed with the context
    std::vector<void *> device_;
    void *pinned_host_ = nullptr;
    Bytes data_, locked_, user_;
    UserMemory user_in_{kMid}, user_out_{kMid};
};

} // namespace xfer::test::copy_mix

// SPDX-License-Identifier: Apache-2.0
// xfer's path statistics against what the driver did, as CUPTI saw it: the known mix of
// copy_mix.hpp runs on each CUDA backend with CUPTI's memcpy activity records on, and the bytes
// CUPTI saw copied from or to pageable host memory, page-locked host memory and device memory
// must be the bytes xfer counted under the paths that move them that way:
//   pageable host memory   driver_pageable
//   page-locked host memory pinned_dma, cached_registration, new_registration, staged, staged_sync
//                           (a staged copy's DMAs run from or to the stager's page-locked slots)
//   device to device        device_copy
// A managed migration (a prefetch) and a mapped buffer's "copy" make no memcpy record, so CUPTI
// seeing nothing else proves those paths moved nothing through the copy engines either.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "copy_mix.hpp"
#include "gpu_fixture.hpp"

namespace xfer::test {
namespace {

using namespace copy_mix;

// The bytes of the memcpy records CUPTI delivered, by the host memory they read or wrote.
struct Seen {
    std::mutex mutex;
    std::uint64_t pageable = 0, pinned = 0, device_to_device = 0, other = 0, records = 0;
    void reset() {
        std::lock_guard<std::mutex> lock(mutex);
        pageable = pinned = device_to_device = other = records = 0;
    }
};
Seen g_seen;

constexpr std::size_t kActivityBuffer = 8u << 20;

void CUPTIAPI buffer_requested(std::uint8_t **buffer, std::size_t *size, std::size_t *max_records) {
    *buffer = static_cast<std::uint8_t *>(std::aligned_alloc(8, kActivityBuffer));
    *size = *buffer != nullptr ? kActivityBuffer : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t *buffer, std::size_t, std::size_t valid) {
    CUpti_Activity *record = nullptr;
    std::lock_guard<std::mutex> lock(g_seen.mutex);
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_MEMCPY) continue;
        const auto *m = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
        ++g_seen.records;
        const bool host_side =
            m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD || m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
        const std::uint8_t host_kind = m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ? m->srcKind : m->dstKind;
        if (m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) {
            g_seen.device_to_device += m->bytes;
        } else if (host_side && host_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) {
            g_seen.pageable += m->bytes;
        } else if (host_side && host_kind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED) {
            g_seen.pinned += m->bytes;
        } else {
            g_seen.other += m->bytes;
        }
    }
    std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
    const char *text = nullptr;
    cuptiGetResultString(r, &text);
    return text != nullptr ? text : "unknown CUPTI error";
}

class GpuCuptiPaths : public GpuBackendTest {
  protected:
    void TearDown() override {
        if (enabled_) (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
        GpuBackendTest::TearDown(); // the context closes (and unregisters) before the mix's memory goes
        ctx_ = nullptr;
    }
    Thresholds thresholds_; // before SetUp opens the context
    Mix mix_;
    bool enabled_ = false;
};

TEST_P(GpuCuptiPaths, TheBytesCuptiSawCopiedAreTheBytesOfTheirPaths) {
    ASSERT_NO_FATAL_FAILURE(mix_.prepare(ctx_, shared_view()));
    static const CUptiResult registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    ASSERT_EQ(registered, CUPTI_SUCCESS) << "cuptiActivityRegisterCallbacks: " << cupti_error(registered);
    g_seen.reset();
    const CUptiResult on = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    ASSERT_EQ(on, CUPTI_SUCCESS) << "cuptiActivityEnable(MEMCPY): " << cupti_error(on);
    enabled_ = true;
    ASSERT_XFER_OK(xfer_context_reset_stats(ctx_));

    ASSERT_NO_FATAL_FAILURE(mix_.run(stream_));
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    ASSERT_EQ(CUPTI_SUCCESS, cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY));
    enabled_ = false;
    ASSERT_EQ(CUPTI_SUCCESS, cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    mix_.verify();

    xfer_context_stats s{};
    s.struct_size = sizeof s;
    ASSERT_XFER_OK(xfer_context_get_stats(ctx_, &s));
    const auto bytes = [&](xfer_copy_path p) { return s.paths[p].bytes; };
    const std::uint64_t pinned = bytes(XFER_PATH_PINNED_DMA) + bytes(XFER_PATH_CACHED_REGISTRATION) +
                                 bytes(XFER_PATH_NEW_REGISTRATION) + bytes(XFER_PATH_STAGED) +
                                 bytes(XFER_PATH_STAGED_SYNC);
    std::lock_guard<std::mutex> lock(g_seen.mutex);
    EXPECT_GT(g_seen.records, 0u);
    EXPECT_EQ(g_seen.pageable, bytes(XFER_PATH_DRIVER_PAGEABLE)) << GetParam() << ": pageable bytes";
    EXPECT_EQ(g_seen.pinned, pinned) << GetParam() << ": page-locked bytes";
    EXPECT_EQ(g_seen.device_to_device, bytes(XFER_PATH_DEVICE_COPY)) << GetParam() << ": device-to-device bytes";
    EXPECT_EQ(g_seen.other, 0u) << GetParam() << ": bytes of memcpy records no path accounts for";
    // And the paths the strategy should take did the work (the exact table: gpu_copy_paths_test).
    for (const auto &[path, want] : expected_paths(GetParam())) {
        EXPECT_EQ(bytes(path), want.bytes) << GetParam() << ": " << xfer_copy_path_name(path);
    }
    std::printf("[ cupti    ] %s: %llu records; pageable %llu B, page-locked %llu B, device-to-device %llu B\n",
                GetParam().c_str(), static_cast<unsigned long long>(g_seen.records),
                static_cast<unsigned long long>(g_seen.pageable), static_cast<unsigned long long>(g_seen.pinned),
                static_cast<unsigned long long>(g_seen.device_to_device));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuCuptiPaths, ::testing::ValuesIn(kCudaBackends), param_name);

} // namespace
} // namespace xfer::test

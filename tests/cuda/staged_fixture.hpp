// SPDX-License-Identifier: Apache-2.0
// Fixture of the pageable staged-path GPU tests: a pageable context opened under one staging
// configuration (set through the XFER_PAGEABLE_* environment variables the core reads at
// xfer_open, restored right after), one stream, and checks that read the device through the
// CUDA runtime directly, so each direction is verified on its own.
#pragma once

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "test_support.hpp"
#include <xfer/xfer.h>

namespace xfer::test {

struct StagingCase {
    const char *label;
    const char *staging_threads;            // nullptr: the declared default (auto)
    const char *chunk_size;                 // nullptr: the declared default
    std::size_t chunk_bytes;                // what chunk_size means, for sizes around it
    const char *staging = nullptr;          // nullptr: the declared default (async); "sync"
    const char *staging_slots = nullptr;    // nullptr: the declared default (auto)
    const char *staged_min_bytes = nullptr; // both directions' thresholds; "0": every copy staged
    const char *path = nullptr;             // nullptr: auto; "driver": the direct path
};

// Sets an environment variable for a scope and puts the old value (or its absence) back.
using ScopedEnv = ::xfer::test::EnvGuard;

class StagedCopyTest : public ::testing::TestWithParam<StagingCase> {
  protected:
    void SetUp() override {
        XFER_REQUIRE_CUDA_DEVICE();
        {
            ScopedEnv threads("XFER_PAGEABLE_STAGING_THREADS", GetParam().staging_threads);
            ScopedEnv chunk("XFER_PAGEABLE_CHUNK_SIZE", GetParam().chunk_size);
            ScopedEnv staging("XFER_PAGEABLE_STAGING", GetParam().staging);
            ScopedEnv slots("XFER_PAGEABLE_STAGING_SLOTS", GetParam().staging_slots);
            ScopedEnv staged_min("XFER_PAGEABLE_STAGED_MIN_BYTES", GetParam().staged_min_bytes);
            ScopedEnv staged_min_to_host("XFER_PAGEABLE_STAGED_MIN_BYTES_TO_HOST", GetParam().staged_min_bytes);
            ScopedEnv path("XFER_PAGEABLE_PATH", GetParam().path);
            ASSERT_XFER_OK(xfer_open("pageable", 0, &ctx_));
        }
        ASSERT_XFER_OK(xfer_stream_create(ctx_, &stream_));
    }
    void TearDown() override {
        if (ctx_ != nullptr) {
            EXPECT_XFER_OK(xfer_close(ctx_)); // also frees the staging ring
        }
    }

    std::size_t chunk() const { return GetParam().chunk_bytes; }
    // 1 byte, just below one chunk, one chunk, three and a bit, 64 MiB: below the staging
    // threshold, the halved single chunk, several chunks with a short tail, many chunks.
    std::vector<std::size_t> sizes() const { return {1, chunk() - 1, chunk(), 3 * chunk() + 17, 64u << 20}; }

    // The device bytes, read by the CUDA runtime itself (not by xfer).
    static std::vector<unsigned char> read_device(const void *device, std::size_t bytes) {
        std::vector<unsigned char> out(bytes, 0);
        EXPECT_EQ(cudaSuccess, cudaMemcpy(out.data(), device, bytes, cudaMemcpyDeviceToHost));
        return out;
    }
    static void write_device(void *device, const std::vector<unsigned char> &bytes) {
        ASSERT_EQ(cudaSuccess, cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    }

    xfer_context ctx_ = nullptr;
    xfer_stream stream_ = nullptr;
};

// Default configuration (async); the asynchronous mode named; small chunks (many per copy),
// three slots for three workers and every copy staged, the smallest too; one worker with
// chunks that are not a power of two; every copy to the driver (path = driver); the synchronous mode.
inline const StagingCase kStagingCases[] = {
    {"default", nullptr, nullptr, 8u << 20},
    {"async", nullptr, nullptr, 8u << 20, "async"},
    {"async_chunk1MiB_threads3_slots3_all_staged", "3", "1MiB", 1u << 20, "async", "3", "0"},
    {"chunk700KiB_threads1", "1", "700KiB", 700u << 10},
    {"driver_path", nullptr, nullptr, 4u << 20, nullptr, nullptr, nullptr, "driver"},
    {"sync", nullptr, nullptr, 8u << 20, "sync"},
};

// gtest prints the case by its label, not as raw bytes.
inline void PrintTo(const StagingCase &c, std::ostream *os) { *os << c.label; }

inline std::string staging_case_name(const ::testing::TestParamInfo<StagingCase> &info) { return info.param.label; }

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the CUDA test suite: GPU presence and handle cleanup (status assertions
// and random data come from tests/support).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <xfer/xfer.h>
#include <xfer_test/support.hpp>

namespace xfer::test {

inline const std::vector<std::string> kCudaBackends = {"pageable", "pinned", "managed", "zerocopy"};

// Random bytes (never zeros: a copy that moved nothing must not pass by accident).
// A fresh seed, also printed by the tests that use it so a failure can be replayed.
std::uint64_t fresh_seed();
std::vector<unsigned char> xored(const std::vector<unsigned char> &in, unsigned char key);

struct GpuPresence {
    bool available = false;
    int count = 0;
    std::string reason; // why not, when unavailable
};
// Asks the CUDA runtime directly (not xfer) once per process.
const GpuPresence &gpu_presence();
// XFER_REQUIRE_GPU=1 (set by tools/gpu-check): a missing GPU fails the GPU-only tests instead
// of skipping them, so a GPU run cannot pass by skipping.
bool gpu_required();

// Plugin folder: the first entry of XFER_PLUGIN_PATH, else lib/xfer of this build.
std::string plugin_dir();

// First index of `name` in the core's backend list, -1 if not listed.
int find_backend(const std::string &name, xfer_backend_info *info);

// Test names end with the backend: CudaBackends/GpuKernel.X/pinned.
inline std::string param_name(const ::testing::TestParamInfo<std::string> &info) { return info.param; }

// Closes a context (and with it every object it owns) at scope exit.
struct ContextGuard {
    xfer_context ctx = nullptr;
    ~ContextGuard() {
        if (ctx != nullptr) {
            xfer_close(ctx);
        }
    }
};

} // namespace xfer::test

// Skips (or, under XFER_REQUIRE_GPU=1, fails) a GPU-only test when the machine has no usable
// CUDA device. Use at the top of a test body or SetUp.
#define XFER_REQUIRE_CUDA_DEVICE()                                                                                     \
    do {                                                                                                               \
        const auto &presence_ = ::xfer::test::gpu_presence();                                                          \
        if (!presence_.available) {                                                                                    \
            if (::xfer::test::gpu_required()) {                                                                        \
                FAIL() << "XFER_REQUIRE_GPU=1 but there is no CUDA device: " << presence_.reason;                      \
            }                                                                                                          \
            GTEST_SKIP() << "no CUDA device (" << presence_.reason << ")";                                             \
        }                                                                                                              \
    } while (0)

// SPDX-License-Identifier: Apache-2.0
#include "test_support.hpp"

#include <cstdlib>
#include <cstring>
#include <random>

#include <cuda_runtime_api.h>

namespace xfer::test {

namespace {
// The CUDA suite checks the paths of the backends' declared defaults: no calibration of the
// machine decides for its contexts unless a test sets XFER_CALIBRATION itself (the calibrated
// choice has its own tests: gpu_user_memory_test.cpp). Set before main(), overwriting nothing.
const bool calibration_off_by_default = ::setenv("XFER_CALIBRATION", "off", 0) == 0;
} // namespace

std::uint64_t fresh_seed() {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

std::vector<unsigned char> xored(const std::vector<unsigned char> &in, unsigned char key) {
    std::vector<unsigned char> out(in);
    for (auto &b : out) {
        b = static_cast<unsigned char>(b ^ key);
    }
    return out;
}

const GpuPresence &gpu_presence() {
    static const GpuPresence presence = [] {
        GpuPresence p;
        const cudaError_t err = cudaGetDeviceCount(&p.count);
        if (err != cudaSuccess) {
            p.reason = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
            (void)cudaGetLastError();
            p.count = 0;
        } else if (p.count == 0) {
            p.reason = "cudaGetDeviceCount reports 0 devices";
        } else {
            p.available = true;
        }
        return p;
    }();
    return presence;
}

bool gpu_required() {
    const char *v = std::getenv("XFER_REQUIRE_GPU");
    return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string plugin_dir() {
    // XFER_PLUGIN_PATH first (a build carried to another machine lives at another path), then
    // the folder of the build this suite was compiled in.
    if (const char *path = std::getenv("XFER_PLUGIN_PATH"); path != nullptr && *path != '\0') {
        const std::string list = path;
        return list.substr(0, list.find(':'));
    }
    return XFER_TEST_PLUGIN_DIR;
}

int find_backend(const std::string &name, xfer_backend_info *info) {
    int count = 0;
    if (xfer_backend_count(&count) != XFER_SUCCESS) {
        return -1;
    }
    for (int i = 0; i < count; ++i) {
        xfer_backend_info bi{};
        if (xfer_backend_get_info(i, &bi) == XFER_SUCCESS && bi.name != nullptr && name == bi.name) {
            *info = bi;
            return i;
        }
    }
    return -1;
}

} // namespace xfer::test

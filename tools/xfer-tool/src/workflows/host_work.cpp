// SPDX-License-Identifier: Apache-2.0
#include "workflows/host_work.hpp"

#include <algorithm>
#include <chrono>

namespace xfer::tool {
namespace {

volatile std::uint64_t g_sink; // observable result: the loop cannot be optimised away

std::uint64_t work_units(std::uint64_t units) {
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (std::uint64_t u = 0; u < units; ++u)
        for (int i = 0; i < 4096; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    return x;
}

double time_units(std::uint64_t units) {
    auto t0 = std::chrono::steady_clock::now();
    g_sink = work_units(units);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

void HostWork::calibrate(double target_ms) {
    std::uint64_t probe = 16;
    double ms = time_units(probe);
    // Grow the probe until it is long enough to time reliably (>= 2 ms).
    while (ms < 2.0 && probe < (1ull << 40)) {
        probe *= 4;
        ms = time_units(probe);
    }
    // The fastest of three runs: the first may pay for a cold cache or a clock ramp-up.
    for (int i = 0; i < 2; ++i) ms = std::min(ms, time_units(probe));
    double per_unit = ms / static_cast<double>(probe);
    units_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(target_ms / per_unit));
}

std::uint64_t HostWork::run() const {
    std::uint64_t r = work_units(units_);
    g_sink = r;
    return r;
}

} // namespace xfer::tool

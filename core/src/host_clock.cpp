// SPDX-License-Identifier: Apache-2.0
#include "host_clock.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace xfer::core::host_clock {
namespace {

bool invariant_tsc() noexcept {
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
    __cpuid(0x80000007u, a, b, c, d);
    return (d & (1u << 8)) != 0; // CPUID.80000007H:EDX[8], invariant TSC
#else
    return false;
#endif
}

std::int64_t steady_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

const bool tsc = invariant_tsc();

namespace {

// The anchor the rate is measured from: when the library was loaded (after `tsc`, which
// ticks() reads: same file, so initialised in this order).
struct Anchor {
    std::uint64_t ticks;
    std::int64_t ns;
};
const Anchor g_anchor{ticks(), steady_ns()};

} // namespace

double ns_per_tick() noexcept {
    if (!tsc) return 1.0;
    static const double rate = [] {
        constexpr std::int64_t kMinSpanNs = 5'000'000;
        std::int64_t now = steady_ns();
        while (now - g_anchor.ns < kMinSpanNs) now = steady_ns();
        const std::uint64_t t = ticks();
        return static_cast<double>(now - g_anchor.ns) / static_cast<double>(t - g_anchor.ticks);
    }();
    return rate;
}

} // namespace xfer::core::host_clock

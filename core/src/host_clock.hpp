// SPDX-License-Identifier: Apache-2.0
// The clock of every copy call's host time (statistics, copy records). It is read twice per
// copy, so it must cost far less than the copy's overhead budget: the time-stamp counter where
// the processor keeps it at a constant rate (x86-64 with an invariant TSC: one instruction),
// else std::chrono::steady_clock (a vDSO call). Ticks become nanoseconds only when read out.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace xfer::core::host_clock {

// True when ticks() reads the TSC (decided once, at load).
extern const bool tsc;

inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
    if (tsc) return __rdtsc();
#endif
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

// Nanoseconds per tick (1 without the TSC). The first call measures the TSC against the steady
// clock over at least 5 ms since the library was loaded (waiting out the rest, once).
double ns_per_tick() noexcept;

inline std::uint64_t to_ns(std::uint64_t ticks) noexcept {
    return static_cast<std::uint64_t>(static_cast<double>(ticks) * ns_per_tick() + 0.5);
}

} // namespace xfer::core::host_clock

// SPDX-License-Identifier: Apache-2.0
#include "copy_policy.hpp"

#include <algorithm>

namespace xfer::cuda::user_memory {
namespace {

xfer_path_reason reason_of(Registrable r) noexcept {
    return r == Registrable::over_limit ? XFER_REASON_CACHE_FULL : XFER_REASON_REGISTRATION_FAILED;
}

} // namespace

Choice unregistered_way(const PolicySettings &s, std::uint64_t bytes, xfer_direction dir) noexcept {
    return s.can_stage && bytes >= s.staged_min[dir == XFER_TO_DEVICE ? 0 : 1] ? Choice::staged : Choice::driver;
}

std::size_t smallest_registered(const PolicySettings &s, bool buffer_view) noexcept {
    return buffer_view && s.model != nullptr ? std::min(s.registration_min, s.buffer_registration_min)
                                             : s.registration_min;
}

Decision decide(const PolicySettings &s, std::uint64_t bytes, xfer_direction dir, unsigned copies_seen,
                Registrable registrable, bool buffer_view) noexcept {
    // The fastest way without page-locking: the staged crossover is the calibration's (or the
    // user's, or the declared default), so that what `xfer-tool list` shows is what decides.
    const Choice unregistered = unregistered_way(s, bytes, dir);
    const bool stage = unregistered == Choice::staged;

    switch (s.path) {
    case PathOverride::driver:
        return {Choice::driver, XFER_REASON_CONFIGURED, false};
    case PathOverride::staged:
        return {s.can_stage ? Choice::staged : Choice::driver, XFER_REASON_CONFIGURED, false};
    case PathOverride::registered:
        if (registrable == Registrable::yes) return {Choice::register_now, XFER_REASON_CONFIGURED, false};
        return {unregistered, reason_of(registrable), false};
    case PathOverride::automatic:
        break;
    }

    if (s.model == nullptr) {
        const bool small = bytes < s.registration_min;
        // Without a calibration: the declared defaults (the strategy's rule, the crossovers).
        if (s.register_first_use) {
            if (small) return {unregistered, XFER_REASON_BELOW_CROSSOVER, false};
            if (registrable == Registrable::yes) return {Choice::register_now, XFER_REASON_FIRST_USE, false};
            return {unregistered, reason_of(registrable), false};
        }
        if (s.can_stage) {
            // Pageable memory from the staged crossover up is staged: the path of this memory.
            return {unregistered, stage ? XFER_REASON_MEMORY : XFER_REASON_BELOW_CROSSOVER, false};
        }
        return {Choice::driver, XFER_REASON_NO_FASTER_PATH, false};
    }
    // Below registration_min page-locking never pays: the way taken is the fastest for the size.
    if (bytes < smallest_registered(s, buffer_view)) return {unregistered, XFER_REASON_BELOW_CROSSOVER, false};
    if (registrable != Registrable::yes) return {unregistered, reason_of(registrable), false};

    const CostModel &m = *s.model;
    const double best = m.seconds(stage ? Way::staged : Way::driver, dir, bytes);
    const double dma = m.seconds(Way::dma, dir, bytes);
    const double registration = m.registration_seconds(bytes);
    // Pays for itself on this copy alone.
    if (registration + dma <= best) {
        return {Choice::register_now, copies_seen > 1 ? XFER_REASON_REUSE : XFER_REASON_MEASURED_FASTEST, false};
    }
    // A buffer's host view copied again is copied again and again (header): its registration is
    // asked for at once, and pays back within kPaybackCopies copies from buffer_registration_min up.
    if (buffer_view && copies_seen > 1 && dma < best) return {unregistered, XFER_REASON_REUSE, true};
    if (copies_seen > 1 && dma < best) {
        const double copies = double(copies_seen);
        if (s.can_stage) {
            // A staging engine serves the copies until the background registration is done: the
            // registration pays once the host time the copies seen spent moving bytes through
            // the arena (or in the driver's copy) exceeds its own.
            const double host = stage ? m.staged_host_seconds(bytes) : best;
            if (registration <= copies * host) return {unregistered, XFER_REASON_REUSE, true};
        } else if (registration <= copies * (best - dma)) {
            // Rent or buy: the time the copies seen lost to the unregistered way buys it now.
            return {Choice::register_now, XFER_REASON_REUSE, false};
        }
    }
    return {unregistered, XFER_REASON_ONE_OFF, false};
}

} // namespace xfer::cuda::user_memory

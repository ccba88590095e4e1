// SPDX-License-Identifier: Apache-2.0
// The per-copy choice for user memory (backends/cuda_common/src/user_memory/copy_policy.hpp) on
// a model shaped like the H200's: one-off copies, reuse, registering now or in the background,
// what cannot be page-locked, the overrides, and the declared defaults without a calibration.
// No device needed (cuda_unit).
#include <gtest/gtest.h>

#include "user_memory/copy_policy.hpp"

namespace xfer::cuda::user_memory {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1 << 20;

// The H200 of 2026-12-06 (docs/results/h200-2026-12-06/cost-probe-c1.txt), rounded: DMA 55 GB/s,
// the driver 8 GB/s to the device and 15 to the host, staged 42-51 GB/s from 16 MiB, a
// registration 0.3 ms + 33 ms/GiB (and half that to unregister), one thread fills 7 GB/s.
CostModel h200() {
    CostModel m;
    const std::uint64_t sizes[] = {64 * KiB, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB};
    for (std::uint64_t b : sizes) {
        m.curve(Way::dma, XFER_TO_DEVICE).add(b, 10e-6 + double(b) / 55e9);
        m.curve(Way::dma, XFER_TO_HOST).add(b, 10e-6 + double(b) / 55e9);
        m.curve(Way::driver, XFER_TO_DEVICE).add(b, 10e-6 + double(b) / 8e9);
        m.curve(Way::driver, XFER_TO_HOST).add(b, 10e-6 + double(b) / 15e9);
        m.curve(Way::staged, XFER_TO_DEVICE).add(b, 400e-6 + double(b) / 45e9);
        m.curve(Way::staged, XFER_TO_HOST).add(b, 150e-6 + double(b) / 52e9);
    }
    m.register_cost = {0.3e-3, 33e-3 / double(1 << 30)};
    m.unregister_cost = {0.08e-3, 15e-3 / double(1 << 30)};
    m.fill_bytes_per_second = 7e9;
    m.track_seconds = 0.5e-6;
    return m;
}

PolicySettings pageable(const CostModel *m) {
    PolicySettings s;
    s.model = m;
    s.can_stage = true;
    s.staged_min[0] = 4 * MiB;
    s.staged_min[1] = 2 * MiB;
    s.registration_min = 256 * KiB;
    return s;
}

PolicySettings pinned(const CostModel *m) {
    PolicySettings s;
    s.model = m;
    s.registration_min = 256 * KiB;
    s.register_first_use = m == nullptr;
    return s;
}

TEST(CopyPolicy, AOneOffCopyOnPageableIsStagedOrGoesToTheDriverNeverRegistered) {
    const CostModel m = h200();
    const PolicySettings s = pageable(&m);
    for (std::uint64_t b : {64 * MiB, 256 * MiB, 1024 * MiB}) { // NOLINT
        const Decision d = decide(s, b, XFER_TO_DEVICE, 1, Registrable::yes);
        EXPECT_EQ(Choice::staged, d.choice) << b;
        EXPECT_EQ(XFER_REASON_ONE_OFF, d.reason) << b;
        EXPECT_FALSE(d.register_in_background) << b;
    }
    const Decision small = decide(s, 1 * MiB, XFER_TO_DEVICE, 1, Registrable::yes);
    EXPECT_EQ(Choice::driver, small.choice);
    const Decision tiny = decide(s, 64 * KiB, XFER_TO_DEVICE, 1, Registrable::yes);
    EXPECT_EQ(Choice::driver, tiny.choice);
    EXPECT_EQ(XFER_REASON_BELOW_CROSSOVER, tiny.reason);
}

TEST(CopyPolicy, ARangeCopiedAgainOnPageableIsRegisteredInTheBackgroundWhileStaged) {
    const CostModel m = h200();
    const PolicySettings s = pageable(&m);
    for (std::uint64_t b : {64 * MiB, 256 * MiB, 1024 * MiB}) { // NOLINT
        for (xfer_direction dir : {XFER_TO_DEVICE, XFER_TO_HOST}) {
            const Decision d = decide(s, b, dir, 2, Registrable::yes);
            EXPECT_EQ(Choice::staged, d.choice) << b;
            EXPECT_TRUE(d.register_in_background) << b;
            EXPECT_EQ(XFER_REASON_REUSE, d.reason) << b;
        }
    }
    // 1 MiB (driver below the staged crossover): 0.43 ms to register and unregister against
    // 0.14 ms of the driver's copy per copy: the background registration waits for the 4th copy.
    EXPECT_FALSE(decide(s, 1 * MiB, XFER_TO_DEVICE, 3, Registrable::yes).register_in_background);
    EXPECT_TRUE(decide(s, 1 * MiB, XFER_TO_DEVICE, 4, Registrable::yes).register_in_background);
}

TEST(CopyPolicy, ABufferViewCopiedAgainIsRegisteredInTheBackgroundFromBufferRegistrationMin) {
    const CostModel m = h200();
    PolicySettings s = pageable(&m);
    s.buffer_registration_min = 16 * KiB;
    EXPECT_EQ(16 * KiB, smallest_registered(s, true));
    EXPECT_EQ(256 * KiB, smallest_registered(s, false));
    // From buffer_registration_min up, at its second copy: asked for at once, copied meanwhile
    // the unregistered way. Its first copy (filling the device view) registers nothing.
    for (std::uint64_t b : {64 * KiB, 1 * MiB, 64 * MiB, 256 * MiB}) { // NOLINT
        const Decision first = decide(s, b, XFER_TO_DEVICE, 1, Registrable::yes, true);
        EXPECT_FALSE(first.register_in_background) << b;
        EXPECT_EQ(XFER_REASON_ONE_OFF, first.reason) << b;
        const Decision d = decide(s, b, XFER_TO_DEVICE, 2, Registrable::yes, true);
        EXPECT_EQ(b >= s.staged_min[0] ? Choice::staged : Choice::driver, d.choice) << b;
        EXPECT_TRUE(d.register_in_background) << b;
        EXPECT_EQ(XFER_REASON_REUSE, d.reason) << b;
        EXPECT_TRUE(decide(s, b, XFER_TO_HOST, 2, Registrable::yes, true).register_in_background) << b;
    }
    // Copies of memory that is not a buffer's: below registration_min never.
    const Decision user_small = decide(s, 64 * KiB, XFER_TO_DEVICE, 5, Registrable::yes);
    EXPECT_FALSE(user_small.register_in_background);
    EXPECT_EQ(XFER_REASON_BELOW_CROSSOVER, user_small.reason);
    // Below it, and where the range cannot be page-locked, or a path is forced: as for any range.
    const Decision tiny = decide(s, 4 * KiB, XFER_TO_DEVICE, 2, Registrable::yes, true);
    EXPECT_FALSE(tiny.register_in_background);
    EXPECT_EQ(XFER_REASON_BELOW_CROSSOVER, tiny.reason);
    const Decision full = decide(s, 64 * MiB, XFER_TO_DEVICE, 2, Registrable::over_limit, true);
    EXPECT_FALSE(full.register_in_background);
    EXPECT_EQ(XFER_REASON_CACHE_FULL, full.reason);
    PolicySettings staged = s;
    staged.path = PathOverride::staged;
    EXPECT_FALSE(decide(staged, 64 * MiB, XFER_TO_DEVICE, 2, Registrable::yes, true).register_in_background);
    // Without a calibration nothing is page-locked in the background, and registration_min holds.
    PolicySettings defaults = pageable(nullptr);
    defaults.buffer_registration_min = 16 * KiB;
    EXPECT_EQ(256 * KiB, smallest_registered(defaults, true));
    EXPECT_FALSE(decide(defaults, 64 * MiB, XFER_TO_DEVICE, 2, Registrable::yes, true).register_in_background);
}

TEST(CopyPolicy, WithoutAStagingEngineARegistrationThatPaysAtOnceIsMadeOnFirstUse) {
    const CostModel m = h200();
    const PolicySettings s = pinned(&m);
    // 64 MiB: 2.4 ms + 1.2 ms DMA against 8.4 ms through the driver.
    const Decision big = decide(s, 64 * MiB, XFER_TO_DEVICE, 1, Registrable::yes);
    EXPECT_EQ(Choice::register_now, big.choice);
    EXPECT_EQ(XFER_REASON_MEASURED_FASTEST, big.reason);
    // 1 MiB: 0.43 ms + 0.03 ms against 0.14 ms: the driver now, registered once the copies seen
    // lost more than the registration costs (rent or buy: 0.11 ms a copy, the 4th copy).
    const Decision first = decide(s, 1 * MiB, XFER_TO_DEVICE, 1, Registrable::yes);
    EXPECT_EQ(Choice::driver, first.choice);
    EXPECT_EQ(XFER_REASON_ONE_OFF, first.reason);
    EXPECT_EQ(Choice::driver, decide(s, 1 * MiB, XFER_TO_DEVICE, 2, Registrable::yes).choice);
    const Decision later = decide(s, 1 * MiB, XFER_TO_DEVICE, 4, Registrable::yes);
    EXPECT_EQ(Choice::register_now, later.choice);
    EXPECT_EQ(XFER_REASON_REUSE, later.reason);
    EXPECT_FALSE(later.register_in_background);
}

TEST(CopyPolicy, WhatCannotBePageLockedGoesTheUnregisteredWayWithItsReason) {
    const CostModel m = h200();
    const Decision full = decide(pageable(&m), 64 * MiB, XFER_TO_DEVICE, 5, Registrable::over_limit);
    EXPECT_EQ(Choice::staged, full.choice);
    EXPECT_EQ(XFER_REASON_CACHE_FULL, full.reason);
    EXPECT_FALSE(full.register_in_background);
    const Decision refused = decide(pinned(&m), 64 * MiB, XFER_TO_DEVICE, 1, Registrable::refused);
    EXPECT_EQ(Choice::driver, refused.choice);
    EXPECT_EQ(XFER_REASON_REGISTRATION_FAILED, refused.reason);
}

TEST(CopyPolicy, OverridesForceTheirPath) {
    const CostModel m = h200();
    PolicySettings s = pageable(&m);
    s.path = PathOverride::driver;
    EXPECT_EQ(Choice::driver, decide(s, 256 * MiB, XFER_TO_DEVICE, 9, Registrable::yes).choice);
    EXPECT_EQ(XFER_REASON_CONFIGURED, decide(s, 256 * MiB, XFER_TO_DEVICE, 9, Registrable::yes).reason);
    s.path = PathOverride::staged;
    EXPECT_EQ(Choice::staged, decide(s, 64 * KiB, XFER_TO_DEVICE, 1, Registrable::yes).choice);
    s.path = PathOverride::registered;
    EXPECT_EQ(Choice::register_now, decide(s, 64 * KiB, XFER_TO_DEVICE, 1, Registrable::yes).choice);
    const Decision over = decide(s, 64 * MiB, XFER_TO_DEVICE, 1, Registrable::over_limit);
    EXPECT_EQ(Choice::staged, over.choice);
    EXPECT_EQ(XFER_REASON_CACHE_FULL, over.reason);
}

TEST(CopyPolicy, WithoutACalibrationTheDeclaredDefaultsDecideAsBefore) {
    const PolicySettings p = pageable(nullptr);
    EXPECT_EQ(Choice::staged, decide(p, 64 * MiB, XFER_TO_DEVICE, 7, Registrable::yes).choice);
    EXPECT_EQ(XFER_REASON_MEMORY, decide(p, 64 * MiB, XFER_TO_DEVICE, 7, Registrable::yes).reason);
    EXPECT_FALSE(decide(p, 64 * MiB, XFER_TO_DEVICE, 7, Registrable::yes).register_in_background);
    EXPECT_EQ(XFER_REASON_BELOW_CROSSOVER, decide(p, 1 * MiB, XFER_TO_DEVICE, 1, Registrable::yes).reason);
    const PolicySettings q = pinned(nullptr);
    const Decision first = decide(q, 8 * MiB, XFER_TO_DEVICE, 1, Registrable::yes);
    EXPECT_EQ(Choice::register_now, first.choice);
    EXPECT_EQ(XFER_REASON_FIRST_USE, first.reason);
    EXPECT_EQ(XFER_REASON_BELOW_CROSSOVER, decide(q, 64 * KiB, XFER_TO_DEVICE, 1, Registrable::yes).reason);
    PolicySettings managed;
    EXPECT_EQ(Choice::driver, decide(managed, 64 * MiB, XFER_TO_DEVICE, 3, Registrable::yes).choice);
    EXPECT_EQ(XFER_REASON_NO_FASTER_PATH, decide(managed, 64 * MiB, XFER_TO_DEVICE, 3, Registrable::yes).reason);
}

} // namespace
} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
// The cost model of copies of user memory (backends/cuda_common/src/user_memory/cost_model.hpp):
// curves between and beyond their points, the staged crossover and registration_min on curves
// shaped like the H200's. No device needed (cuda_unit).
#include <cmath>

#include <gtest/gtest.h>

#include "user_memory/cost_model.hpp"

namespace xfer::cuda::user_memory {
namespace {

constexpr std::uint64_t MiB = 1 << 20;

TEST(CostModelCurve, InterpolatesBetweenPointsAndExtrapolatesAtTheLastRate) {
    Curve c;
    c.add(1 * MiB, 0.001);
    c.add(4 * MiB, 0.004);
    c.add(2 * MiB, 0.0025); // sorted on insert
    ASSERT_EQ(3u, c.points().size());
    EXPECT_EQ(2 * MiB, c.points()[1].bytes);
    EXPECT_DOUBLE_EQ(0.001, c.seconds(1 * MiB));
    EXPECT_DOUBLE_EQ(0.00175, c.seconds(3 * MiB / 2)); // halfway between 1 and 2 MiB
    EXPECT_DOUBLE_EQ(0.001, c.seconds(4096));          // below the first: never less than the smallest
    EXPECT_NEAR(0.00475, c.seconds(5 * MiB), 1e-12);   // beyond: the last segment's 0.75 ms/MiB
    c.add(2 * MiB, 0.002);                             // a size again replaces its point
    EXPECT_DOUBLE_EQ(0.002, c.seconds(2 * MiB));
    EXPECT_TRUE(std::isinf(Curve{}.seconds(1)));
}

// Driver ~8 GB/s with ~10 us latency; staged slower below 8 MiB (its start-up), 45 GB/s above;
// DMA 55 GB/s; registration 0.25 ms + 33 ms/GiB; tracking a copy 0.5 us (the H200's figures, rounded).
CostModel h200_like() {
    CostModel m;
    const std::uint64_t sizes[] = {64 * 1024, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB};
    for (std::uint64_t b : sizes) {
        for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) {
            m.curve(Way::dma, d).add(b, 8e-6 + double(b) / 55e9);
            m.curve(Way::driver, d).add(b, 10e-6 + double(b) / 8e9);
            m.curve(Way::staged, d).add(b, 600e-6 + double(b) / 45e9);
        }
    }
    m.register_cost = {250e-6, 33e-3 / double(1ull << 30)};
    m.unregister_cost = {80e-6, 15e-3 / double(1ull << 30)};
    m.fill_bytes_per_second = 7e9;
    m.track_seconds = 0.5e-6;
    return m;
}

TEST(CostModel, StagedCrossoverIsWhereTheEngineStartsToWinAndStaysAhead) {
    const CostModel m = h200_like();
    ASSERT_TRUE(m.complete(true));
    const auto x = m.staged_crossover(XFER_TO_DEVICE);
    ASSERT_TRUE(x.has_value());
    // Faster by the margin: 1.1 * (600 us + b/45e9) = 10 us + b/8e9  =>  b ~ 6.46 MB, found to
    // within 1/64 of the size and rounded up to a page.
    EXPECT_GE(*x, 6'460'000u);
    EXPECT_LT(*x, 6'470'000u + 6'470'000u / 64 + 4096);
    EXPECT_EQ(0u, *x % 4096);
    const double margin = 1.0 + CostModel::kStagedMargin;
    EXPECT_LT(m.seconds(Way::staged, XFER_TO_DEVICE, *x) * margin, m.seconds(Way::driver, XFER_TO_DEVICE, *x));
    // Just faster is not enough.
    EXPECT_LT(m.seconds(Way::staged, XFER_TO_DEVICE, 6'000'000), m.seconds(Way::driver, XFER_TO_DEVICE, 6'000'000));
    EXPECT_GT(m.seconds(Way::staged, XFER_TO_DEVICE, 6'000'000) * margin,
              m.seconds(Way::driver, XFER_TO_DEVICE, 6'000'000));
}

TEST(CostModel, NoCrossoverWhenTheEngineNeverWinsOrWasNotMeasured) {
    CostModel m = h200_like();
    const CostModel original = h200_like();
    for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) {
        m.curve(Way::staged, d) = Curve{};
        for (const Curve::Point &p : original.curve(Way::driver, d).points())
            m.curve(Way::staged, d).add(p.bytes, p.seconds * 1.5);
    }
    EXPECT_FALSE(m.staged_crossover(XFER_TO_DEVICE).has_value());
    m.curve(Way::staged, XFER_TO_HOST) = Curve{};
    EXPECT_FALSE(m.staged_crossover(XFER_TO_HOST).has_value());
    EXPECT_FALSE(m.complete(true));
    EXPECT_TRUE(m.complete(false));
}

TEST(CostModel, RegistrationMinIsWhereARegistrationPaysBackWithinThePaybackCopies) {
    const CostModel m = h200_like();
    const auto against_driver = m.registration_min(XFER_TO_DEVICE, false);
    ASSERT_TRUE(against_driver.has_value());
    // R(b) <= 100 * (b/8e9 + 10us - b/55e9 - 8us) from ~30 KB, but tracking (0.5 us) stays within
    // 1% of the copy only from 50 us of driver time: 10 us + b/8e9 >= 50 us  =>  b >= 320 KB.
    EXPECT_GT(*against_driver, 300'000u);
    EXPECT_LT(*against_driver, 340'000u);
    const std::uint64_t b = *against_driver;
    const double saving = m.seconds(Way::driver, XFER_TO_DEVICE, b) - m.seconds(Way::dma, XFER_TO_DEVICE, b);
    EXPECT_LE(m.registration_seconds(b), CostModel::kPaybackCopies * saving * 1.05);
    EXPECT_LE(m.track_seconds, CostModel::kTrackingShare * m.seconds(Way::driver, XFER_TO_DEVICE, b) * 1.05);
    // Where tracking costs nothing, the payback alone decides: from ~30 KB (below the first point).
    CostModel free_tracking = m;
    free_tracking.track_seconds = 1e-12;
    EXPECT_LT(*free_tracking.registration_min(XFER_TO_DEVICE, false), 64u * 1024);
    // A buffer's host view is not tracked: the payback alone decides, whatever tracking costs.
    EXPECT_EQ(*free_tracking.registration_min(XFER_TO_DEVICE, false),
              *m.registration_min(XFER_TO_DEVICE, false, false));
    // Against the staging engine the smaller sizes still go to the driver, so the answer is the same or larger.
    const auto against_staged = m.registration_min(XFER_TO_DEVICE, true);
    ASSERT_TRUE(against_staged.has_value());
    EXPECT_GE(*against_staged, *against_driver);
    EXPECT_DOUBLE_EQ(m.registration_seconds(MiB), 330e-6 + 48e-3 / 1024);
    EXPECT_DOUBLE_EQ(64 * MiB / 7e9, m.staged_host_seconds(64 * MiB));
}

} // namespace
} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
// min / median / max of repeated measurements.
#include <stdexcept>

#include <gtest/gtest.h>

#include "stats.hpp"

using namespace xfer::tool;

TEST(Stats, OddCountMedianIsTheMiddleSample) {
    Stats s = summarize({5.0, 1.0, 3.0});
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.median, 3.0);
    EXPECT_DOUBLE_EQ(s.max, 5.0);
    EXPECT_EQ(s.samples, 3u);
}

TEST(Stats, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
    Stats s = summarize({4.0, 1.0, 2.0, 10.0});
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.median, 3.0);
    EXPECT_DOUBLE_EQ(s.max, 10.0);
    EXPECT_EQ(s.samples, 4u);
}

TEST(Stats, SingleValue) {
    Stats s = single(2.5);
    EXPECT_DOUBLE_EQ(s.min, 2.5);
    EXPECT_DOUBLE_EQ(s.median, 2.5);
    EXPECT_DOUBLE_EQ(s.max, 2.5);
    EXPECT_EQ(s.samples, 1u);
    Stats one = summarize({7.0});
    EXPECT_DOUBLE_EQ(one.median, 7.0);
}

TEST(Stats, NoSamplesIsAnError) { EXPECT_THROW(summarize({}), std::invalid_argument); }

TEST(Stats, MeanAndSampleStandardDeviation) {
    Stats s = summarize({2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0});
    EXPECT_DOUBLE_EQ(s.mean, 5.0);
    EXPECT_NEAR(s.stddev, 2.138089935, 1e-9); // sqrt(32 / 7)
    EXPECT_EQ(s.values, (std::vector<double>{2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}));
    Stats one = single(3.0);
    EXPECT_DOUBLE_EQ(one.mean, 3.0);
    EXPECT_DOUBLE_EQ(one.stddev, 0.0);
}

TEST(Stats, KeepsTheSamplesInMeasurementOrder) {
    Stats s = summarize({3.0, 1.0, 2.0});
    EXPECT_EQ(s.values, (std::vector<double>{3.0, 1.0, 2.0}));
}

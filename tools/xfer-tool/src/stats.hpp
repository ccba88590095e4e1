// SPDX-License-Identifier: Apache-2.0
// Minimum / median / maximum, mean and standard deviation over repeated measurements: what
// every report shows.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace xfer::tool {

struct Stats {
    double min = 0.0;
    double median = 0.0; // mean of the two middle samples for an even count
    double max = 0.0;
    std::size_t samples = 0;
    double mean = std::numeric_limits<double>::quiet_NaN();
    double stddev = std::numeric_limits<double>::quiet_NaN(); // sample standard deviation (n - 1); 0 for one sample
    std::vector<double> values;                               // the samples in measurement order (JSON --samples)
};

// Throws std::invalid_argument for an empty sample set: a figure without samples is a bug.
Stats summarize(std::vector<double> samples);

// A figure computed once (e.g. host preparation time).
Stats single(double value);

} // namespace xfer::tool

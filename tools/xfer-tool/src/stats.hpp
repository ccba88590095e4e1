// Minimum / median / maximum over repeated measurements: what every report shows.
#pragma once

#include <cstddef>
#include <vector>

namespace xfer_tool {

struct Stats {
    double min = 0.0;
    double median = 0.0; // mean of the two middle samples for an even count
    double max = 0.0;
    std::size_t samples = 0;
};

// Throws std::invalid_argument for an empty sample set: a figure without samples is a bug.
Stats summarize(std::vector<double> samples);

// A figure computed once (e.g. host preparation time).
Stats single(double value);

} // namespace xfer_tool

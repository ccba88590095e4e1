// SPDX-License-Identifier: Apache-2.0
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace xfer::tool {

Stats summarize(std::vector<double> samples) {
    if (samples.empty()) throw std::invalid_argument("summarize: no samples");
    Stats s;
    s.values = samples;
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
    s.samples = n;
    double sum = 0.0;
    for (double v : samples) sum += v;
    s.mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (double v : samples) squares += (v - s.mean) * (v - s.mean);
    s.stddev = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
    return s;
}

Stats single(double value) { return summarize({value}); }

} // namespace xfer::tool

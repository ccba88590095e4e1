#include "stats.hpp"

#include <algorithm>
#include <stdexcept>

namespace xfer_tool {

Stats summarize(std::vector<double> samples)
{
    if (samples.empty())
        throw std::invalid_argument("summarize: no samples");
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    Stats s;
    s.min = samples.front();
    s.max = samples.back();
    s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
    s.samples = n;
    return s;
}

Stats single(double value)
{
    return Stats{value, value, value, 1};
}

} // namespace xfer_tool

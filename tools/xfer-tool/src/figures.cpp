// SPDX-License-Identifier: Apache-2.0
#include "figures.hpp"

#include "stats.hpp"
#include "units.hpp"

namespace xfer::tool {

Figure time_figure(const std::string &name, const std::vector<double> &ms, std::uint64_t bytes,
                   const std::string &note) {
    return Figure{name, "ms", bytes, summarize(ms), note};
}

Figure rate_figure(const std::string &name, std::uint64_t bytes, const std::vector<double> &ms,
                   const std::string &note) {
    // A copy below the event timer's resolution (0 ms) has no finite rate: leave it out
    // rather than report infinity.
    std::vector<double> rates;
    rates.reserve(ms.size());
    for (double t : ms)
        if (t > 0.0) rates.push_back(gb_per_s(bytes, t));
    if (rates.empty()) return absent_figure(name, "GB/s", bytes, "too short for the event timer");
    return Figure{name, "GB/s", bytes, summarize(rates), note};
}

Figure value_figure(const std::string &name, const std::string &unit, const std::vector<double> &values,
                    const std::string &note) {
    return Figure{name, unit, 0, summarize(values), note};
}

Figure absent_figure(const std::string &name, const std::string &unit, std::uint64_t bytes, const std::string &note) {
    return Figure{name, unit, bytes, std::nullopt, note};
}

double median_of(const std::vector<double> &samples) { return summarize(samples).median; }

} // namespace xfer::tool

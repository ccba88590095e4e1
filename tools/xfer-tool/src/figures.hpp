// SPDX-License-Identifier: Apache-2.0
// The figures of a result (result.hpp) made from samples: a time, a rate in GB/s (10^9 B/s), a
// value in any unit, or a figure that could not be measured. Workflows, the side-by-side
// figures and the bench build theirs with these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "result.hpp"

namespace xfer::tool {

Figure time_figure(const std::string &name, const std::vector<double> &ms, std::uint64_t bytes = 0,
                   const std::string &note = "");
// GB/s (10^9 B/s) of `bytes` moved in each sample's milliseconds.
Figure rate_figure(const std::string &name, std::uint64_t bytes, const std::vector<double> &ms,
                   const std::string &note = "");
Figure value_figure(const std::string &name, const std::string &unit, const std::vector<double> &values,
                    const std::string &note = "");
// A figure that cannot be measured on this backend (e.g. GB/s of a copy that moves nothing).
Figure absent_figure(const std::string &name, const std::string &unit, std::uint64_t bytes, const std::string &note);

// The median of a sample set (for derived figures).
double median_of(const std::vector<double> &samples);

} // namespace xfer::tool

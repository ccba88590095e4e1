// SPDX-License-Identifier: Apache-2.0
// `xfer-tool diff A.json B.json`: the figures of two reports that changed beyond their spread,
// for regressions across versions and machines.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "result.hpp"

namespace xfer::tool {

// One figure present in both reports with a number in each.
struct FigureChange {
    std::string workflow, backend, figure, unit;
    std::uint64_t bytes = 0;
    double before = 0, after = 0; // medians
    double change = 0;            // (after - before) / before
    bool significant = false;     // beyond the spread (figure_changed)
    bool better = false;          // in the direction that is good for the unit (higher GB/s and x, lower ms)
};

// Beyond the spread: the medians differ by more than twice the combined standard deviation
// (sqrt(sd_a^2 + sd_b^2); half the min-max range stands in where a report has no stddev) and
// by at least `min_relative` of the first median, so identical-looking runs stay quiet.
bool figure_changed(const Stats &a, const Stats &b, double min_relative = 0.02);

// Every figure matched by workflow, backend, figure name, unit and size.
std::vector<FigureChange> compare_reports(const Report &a, const Report &b);

// Both runs' metadata, then the changed figures (all of them with `all`), then a count.
// Returns the regressions: figures that changed beyond their spread for the worse.
int write_diff(std::ostream &out, const Report &a, const Report &b, const std::string &name_a,
               const std::string &name_b, bool all);

// Reads a JSON report; throws std::runtime_error naming the file and what is wrong.
Report read_report_file(const std::string &path);

} // namespace xfer::tool

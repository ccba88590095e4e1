// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace xfer::tool {

std::map<Verdict, int> count_verdicts(const BenchReport &report);
// "44 targets: 40 PASS, 4 FAIL"
std::string summary_line(const BenchReport &report);

// One line per target (target, xfer, reference, ratio, target ratio, verdict), the reason of
// every FAIL and ERROR under it, and the summary line.
void write_bench_table(std::ostream &out, const BenchReport &report);
// The JSON report: the envelope of every xfer-tool report ("results" empty) plus "bench".
nlohmann::json bench_to_json(const BenchReport &report);

} // namespace xfer::tool

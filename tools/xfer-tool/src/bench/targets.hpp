// SPDX-License-Identifier: Apache-2.0
// The bench's table of targets: the project's performance claims on the CUDA backends, and the
// smoke set on `host` (no targets; judged by completing and verifying). A new claim appends
// its rows here. Names are stable: scripts select by them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bench/bench_env.hpp"

namespace xfer::tool {

struct TargetSpec {
    std::string name;    // "<backend>-<what>[-<direction>][-<size>]"
    std::string backend; // the backend the claim is about (first part of the name)
    std::string summary; // what is compared with what, and where the target comes from
    std::uint64_t bytes = 0;
    std::optional<Goal> goal; // none: smoke
    std::function<void(BenchEnv &, BenchRow &)> measure;
};

const std::vector<TargetSpec> &cuda_targets();
const std::vector<TargetSpec> &smoke_targets();

// The targets to run, in table order. backends: the targets of these backends (from both
// tables); none given: the CUDA table when `gpu`, else the smoke set. patterns: names or shell
// patterns (fnmatch) that narrow the choice; with no backend given they choose from both
// tables. Throws std::invalid_argument when a backend or a pattern selects nothing.
std::vector<const TargetSpec *> select_targets(const std::vector<std::string> &backends,
                                               const std::vector<std::string> &patterns, bool gpu);

} // namespace xfer::tool

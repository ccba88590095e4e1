// SPDX-License-Identifier: Apache-2.0
// `xfer-tool bench`: every performance target of the project, xfer's path side by side with
// the raw path it must match or beat (the raw CUDA call, or std::memcpy on the host backend),
// in one process: warm-up first, then --repeats pairs, alternating which side goes first;
// the median of the per-pair ratios is judged against the target. Every side's result is
// verified byte for byte; a failed verification is FAIL whatever the speed.
//
// On a machine without a GPU the default is a small smoke set on `host`: its rows have no
// target and are judged by completing and verifying ("smoke"), not by timing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result.hpp"
#include "stats.hpp"
#include "verify.hpp"

namespace xfer::tool {

struct BenchOptions {
    std::vector<std::string> backends; // targets of these backends; empty: by what the machine has
    std::vector<std::string> targets;  // names or shell patterns ("pageable-raw-*"); empty: all selected
    int device = -1;                   // -1: XFER_DEVICE / the config file / 0
    int repeats = 10;
    int warmup = 2;
    std::uint64_t seed = 0;
    std::string format = "table"; // table | json
    std::string output;           // "" = stdout
    std::string config;           // handed to the library as XFER_CONFIG
    bool list = false;            // print the targets, run nothing
    bool quiet = false;
};

// What a row's ratio must be: at least or at most `value`, in `unit` (the row's ratio unit).
struct Goal {
    enum class Op { at_least, at_most };
    Op op = Op::at_least;
    double value = 0;
    std::string unit = "x"; // "x", "%", "us"
    bool met(double ratio) const { return op == Op::at_least ? ratio >= value : ratio <= value; }
};

// One side of a row: what was measured, in which unit, over the repeats.
struct BenchFigure {
    std::string label; // "xfer pageable", "raw cudaMemcpyAsync", "pinned", "copy time"
    std::string unit;  // "GB/s", "ms", "us", "x"
    std::optional<Stats> stats;
};

struct BenchRow {
    std::string target;  // stable short name, "<backend>-<what>[-<direction>][-<size>]"
    std::string backend; // the backend the claim is about
    std::string summary; // one line: what is compared with what
    std::uint64_t bytes = 0;
    BenchFigure xfer, reference;
    std::string ratio_unit; // "x", "%", "us"
    std::string ratio_note; // how the ratio is formed from each pair
    std::optional<Stats> ratio;
    std::optional<Goal> goal; // none: a smoke row (judged by completing and verifying)
    Verification verification;
    std::string error; // the failed call that stopped the row
};

enum class Verdict { pass, fail, smoke, error };
Verdict verdict(const BenchRow &row);
const char *to_string(Verdict v); // "PASS", "FAIL", "smoke", "ERROR"

// ">= 0.9x", "<= 5%", "<= 0.1 us"; "(smoke)" without a goal.
std::string goal_text(const BenchRow &row);
// "0.934x", "3.2%", "+0.04 us"; "-" without a ratio.
std::string ratio_text(const BenchRow &row);

struct BenchReport {
    std::string tool_version, library_version;
    RunInfo run;                         // the metadata of every report (run_info.hpp), bench's options in its config
    std::optional<DeviceSummary> device; // of the first backend opened; none when none was
    int repeats = 0, warmup = 0;
    std::uint64_t seed = 0;
    std::vector<BenchRow> rows;
};

} // namespace xfer::tool

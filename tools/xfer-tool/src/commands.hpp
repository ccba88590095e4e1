// SPDX-License-Identifier: Apache-2.0
// The sub-commands behind main(); each returns the process exit status.
#pragma once

#include <string>
#include <vector>

#include "cli.hpp"

namespace xfer::tool {

enum ExitStatus {
    kExitOk = 0,
    kExitVerificationFailed = 1,
    kExitRegressions = 1, // diff: a figure got worse beyond its spread
    kExitUsage = 2,
    kExitError = 3,
    kExitTargetMissed = 4, // bench: a target missed its ratio (everything verified)
};

int run_list();
int run_workflows(const RunOptions &options, bool compare);
int run_plot(const PlotOptions &options);
int run_diff(const DiffOptions &options);
// `xfer-tool bench`: parses its own options (bench/bench_command.cpp); throws UsageError.
int run_bench_command(const std::vector<std::string> &args, const std::string &command_line);
// `xfer-tool calibrate`: parses its own options (calibrate_command.cpp); throws UsageError.
int run_calibrate_command(const std::vector<std::string> &args);

// "1.0.0" of the libxfer loaded at run time, or "unknown".
std::string library_version();

// Points the library at the configuration file (XFER_CONFIG) before its first call.
void use_config_file(const std::string &path);

} // namespace xfer::tool

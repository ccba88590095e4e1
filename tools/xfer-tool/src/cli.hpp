// SPDX-License-Identifier: Apache-2.0
// The command line of xfer-tool (Boost.Program_options):
//   xfer-tool list | run WORKFLOW... | compare [WORKFLOW...] | plot FILE -o IMAGE | diff A.json B.json | bench
// Each sub-command is one parse_* function and one row of the table in parse_command_line.
// Run options may also come from the [xfer-tool] section of the configuration file
// (--config, else XFER_CONFIG); the command line wins over the file.
#pragma once

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "run_options.hpp"

namespace xfer::tool {

enum class Command { help, version, list, run, compare, plot, diff, bench, calibrate };

struct PlotOptions {
    std::string input;
    std::string output;
    std::string kind = "bandwidth"; // bandwidth (from a JSON report) | overlap (from a --trace file)
};

struct DiffOptions {
    std::string before; // A.json
    std::string after;  // B.json
    bool all = false;   // also list the figures that did not change
};

struct Invocation {
    Command command = Command::help;
    RunOptions run;                      // run, compare
    PlotOptions plot;                    // plot
    DiffOptions diff;                    // diff
    std::string config;                  // list, run, compare: the configuration file ("" = none)
    std::string help_text;               // help: what to print
    std::vector<std::string> bench_args; // bench, calibrate: its arguments, parsed by the command itself
};

// A command line the tool cannot run; what() says what is wrong, hint() where to look.
class UsageError : public std::runtime_error {
  public:
    UsageError(const std::string &what, std::string hint) : std::runtime_error(what), hint_(std::move(hint)) {}
    const std::string &hint() const { return hint_; }

  private:
    std::string hint_;
};

// Throws UsageError. Reads the configuration file named by --config (or XFER_CONFIG) for the
// [xfer-tool] section of run options; a file that cannot be read is a UsageError too.
Invocation parse_command_line(const std::vector<std::string> &args);

// Applies the [xfer-tool] section of a configuration file (keys = long option names) to
// options the command line left unset (exposed for tests). Throws UsageError.
void apply_config_section(std::istream &file, const std::string &source,
                          const std::vector<std::string> &set_on_command_line, RunOptions &options);

std::string general_help();
std::string run_help(const char *command);

} // namespace xfer::tool

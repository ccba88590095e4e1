// SPDX-License-Identifier: Apache-2.0
// One set of short options for every sub-command: a long option has the same letter wherever
// it exists (run, compare, bench, calibrate, plot, ...), and no letter means two things.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace xfer::tool {

// Every long option that has a letter, with its letter.
const std::vector<std::pair<std::string, char>> &short_options();

// The name Boost.Program_options takes: "backend,b", or "seed" for an option without a letter.
std::string option_key(const std::string &long_name);

} // namespace xfer::tool

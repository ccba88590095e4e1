// SPDX-License-Identifier: Apache-2.0
// The values an open context uses (xfer::Context::settings()) as a table: `list` and `calibrate`
// print them alike.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "xfer_handles.hpp"

namespace xfer::tool {

// One row per value: name, value, source (calibration, default, file, env), default, and
// whether it is a parameter the user owns or a value the backend derives.
void print_settings_table(std::ostream &out, const std::vector<xfer::Setting> &settings, const std::string &indent);

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// One configuration value with where it came from: a row of xfer_param_get_info and of
// xfer_context_get_setting.
#pragma once

#include <string>

#include <xfer/xfer.h>

namespace xfer::core {

struct Setting {
    std::string section; // "" for top-level keys, else the backend name
    std::string name;
    std::string env;
    std::string type;
    std::string value; // canonical: sizes in bytes, bools 0/1
    std::string default_value;
    std::string help;
    xfer_param_source source = XFER_PARAM_DEFAULT;
};

} // namespace xfer::core

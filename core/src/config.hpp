// SPDX-License-Identifier: Apache-2.0
// The effective configuration: XFER_CONFIG file + environment + what the found backends
// declare, validated as a whole. Read afresh at every xfer_open, xfer_backend_count and
// xfer_param_count, so a program sees changes to the file or the environment.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin_registry.hpp"
#include "xfer_config/config_file.hpp"
#include <xfer/xfer.h>

namespace xfer::core {

// One row of xfer_param_get_info.
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

struct EffectiveConfig {
    ConfigFile file;
    Discovery discovery;
    std::string backend;             // "" when neither XFER_BACKEND nor the file names one
    std::optional<int> device;       // unset when neither XFER_DEVICE nor the file sets it
    std::string slow_path = "allow"; // allow | warn | refuse (key slow_path, XFER_SLOW_PATH)
    bool log_copies = false;         // key log = copies (XFER_LOG)
    std::string log_file;            // key log_file (XFER_LOG_FILE); "": stderr
    std::vector<Setting> settings;   // top-level keys, then each loaded backend's parameters

    // Canonical values of one backend's parameters, in declaration order.
    std::vector<std::pair<std::string, std::string>> backend_params(const std::string &backend) const;
};

// Reads everything; throws Error (XFER_ERROR_CONFIG) naming the key, value and line (or the
// environment variable) that is wrong. `requested` (xfer_open's backend argument, NULL when
// none): the backend to open; with it, or with a backend named by XFER_BACKEND or the file,
// only that backend's plugin is opened (plugin_registry.hpp says why), and the file's sections
// of the other backends are checked by name only. Opening::every (the enumeration entries):
// every plugin found is opened whatever XFER_BACKEND or the file names, since a listing
// shows every backend (the named one is only the default of xfer_open).
enum class Opening { selected, every };
EffectiveConfig load_effective_config(const char *requested = nullptr, Opening opening = Opening::selected);

// XFER_<BACKEND>_<PARAM>: upper case, characters other than letters and digits become '_'.
std::string param_env_name(const std::string &backend, const std::string &param);

} // namespace xfer::core

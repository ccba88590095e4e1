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
#include "setting.hpp"
#include "xfer_config/config_file.hpp"
#include <xfer/xfer.h>

namespace xfer::core {

struct EffectiveConfig {
    ConfigFile file;
    Discovery discovery;
    std::string backend;             // "" when neither XFER_BACKEND nor the file names one
    std::optional<int> device;       // unset when neither XFER_DEVICE nor the file sets it
    std::string slow_path = "allow"; // allow | warn | refuse (key slow_path, XFER_SLOW_PATH)
    bool log_copies = false;         // key log = copies (XFER_LOG)
    std::string log_file;            // key log_file (XFER_LOG_FILE); "": stderr
    std::string calibration;         // key calibration (XFER_CALIBRATION): "", "off" or a folder
    std::vector<Setting> settings;   // top-level keys, then each loaded backend's parameters
    // Each loaded backend's derived values (plugin ABI 1.8), as a user set them (source FILE or
    // ENV) or not at all (DEFAULT, value the declared default): xfer_context_get_setting's rows.
    std::vector<Setting> derived;

    // Canonical values of one backend's parameters, in declaration order, then the derived
    // values the user set (a backend derives the others itself).
    std::vector<std::pair<std::string, std::string>> backend_params(const std::string &backend) const;
    // The rows of `settings` (or of `derived`) of one backend.
    std::vector<Setting> backend_settings(const std::string &backend) const;
    std::vector<Setting> backend_derived(const std::string &backend) const;
};

// The effective `calibration` setting alone (XFER_CONFIG's key, then XFER_CALIBRATION), for
// xfer_calibrate: no plugin is looked for.
std::string calibration_setting_now();

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

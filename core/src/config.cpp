// SPDX-License-Identifier: Apache-2.0
#include "config.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "error.hpp"
#include "xfer_config/value_parse.hpp"

namespace xfer::core {
namespace {

// getenv, with an empty value treated as unset (so `XFER_BACKEND= prog` means "not set").
// secure_getenv: in a set-user-ID or set-group-ID process the variables that choose code to
// load or files to read and write (XFER_PLUGIN_PATH, XFER_CONFIG, XFER_LOG_FILE, XFER_CALIBRATION) are ignored, as the dynamic loader
// ignores LD_LIBRARY_PATH there; the others only choose among what that code offers.
std::optional<std::string> env(const std::string &name) {
    const bool selects_code =
        name == "XFER_PLUGIN_PATH" || name == "XFER_CONFIG" || name == "XFER_LOG_FILE" || name == "XFER_CALIBRATION";
    const char *value = selects_code ? secure_getenv(name.c_str()) : std::getenv(name.c_str());
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
}

const ConfigEntry *find_top_level(const ConfigFile &file, const std::string &key) {
    for (const ConfigEntry &e : file.entries) {
        if (e.section.empty() && e.key == key) return &e;
    }
    return nullptr;
}

std::string where(const ConfigFile &file, const ConfigEntry &e) { return msg(file.path, ":", e.line); }

// Validates a value from the file; the message names file, line, key and value.
std::string file_value(const ConfigFile &file, const ConfigEntry &e, const std::string &type) {
    std::string why;
    auto value = normalize_value(type, e.value, &why);
    if (!value) {
        std::string key = e.section.empty() ? e.key : "[" + e.section + "] " + e.key;
        raise(XFER_ERROR_CONFIG, where(file, e), ": bad value '", e.value, "' for key '", key, "' (", type, "): ", why);
    }
    return *value;
}

std::string env_value(const std::string &var, const std::string &text, const std::string &type) {
    std::string why;
    auto value = normalize_value(type, text, &why);
    if (!value)
        raise(XFER_ERROR_CONFIG, "bad value '", text, "' in environment variable ", var, " (", type, "): ", why);
    return *value;
}

int device_index(const std::string &canonical, const std::string &origin) {
    int device = std::stoi(canonical); // already validated as an int
    if (device < 0) raise(XFER_ERROR_CONFIG, origin, ": device must be >= 0, not ", device);
    return device;
}

void check_top_level_keys(const ConfigFile &file) {
    for (const ConfigEntry &e : file.entries) {
        if (!e.section.empty()) continue;
        if (e.key != "backend" && e.key != "device" && e.key != "plugin_path" && e.key != "slow_path" &&
            e.key != "log" && e.key != "log_file" && e.key != "calibration") {
            raise(XFER_ERROR_CONFIG, where(file, e), ": unknown key '", e.key,
                  "' (top-level keys are backend, device, plugin_path, slow_path, log, log_file, calibration; backend "
                  "parameters go in a [backend] section)");
        }
    }
}

// Keys of a [section] must be parameters the backend of that name declares. A backend that
// was found but failed to load (e.g. libcudart missing on this machine) cannot say what it
// declares: its section is accepted unchecked, so one config file serves GPU and non-GPU
// machines alike. A section naming no backend at all is an error (most likely a typo).
// Sections of applications that share the file (xfer-tool reads its run options from
// [xfer-tool], as DESIGN.md asks) are theirs to check, not the library's.
bool is_application_section(const std::string &section) { return section == "xfer-tool"; }

void check_section_keys(const ConfigFile &file, const Discovery &discovery) {
    for (const ConfigEntry &e : file.entries) {
        if (e.section.empty() || is_application_section(e.section)) continue;
        const FoundBackend *b = discovery.find(e.section);
        if (b == nullptr && discovery.found_unopened(e.section)) continue; // its keys: checked when it is opened
        if (b == nullptr) {
            raise(XFER_ERROR_CONFIG, where(file, e), ": unknown key '", e.key, "' in section [", e.section,
                  "]: no backend named '", e.section, "' was found (searched: ", discovery.describe_dirs(), ")");
        }
        const Plugin &p = *b->plugin;
        if (!p.loaded()) continue;
        bool declared = false;
        for (std::size_t i = 0; i < p.table.param_count && !declared; ++i) declared = e.key == p.table.params[i].name;
        for (std::size_t i = 0; i < p.table.derived_count && !declared; ++i)
            declared = e.key == p.table.derived[i].name;
        if (!declared) {
            std::string known;
            for (std::size_t i = 0; i < p.table.param_count; ++i)
                known += (known.empty() ? "" : ", ") + std::string(p.table.params[i].name);
            for (std::size_t i = 0; i < p.table.derived_count; ++i)
                known += (known.empty() ? "" : ", ") + std::string(p.table.derived[i].name) + " (derived)";
            raise(XFER_ERROR_CONFIG, where(file, e), ": unknown key '", e.key, "' in section [", e.section,
                  "] (backend '", e.section, "' declares: ", known.empty() ? "no parameters" : known, ")");
        }
    }
}

const ConfigEntry *find_in_section(const ConfigFile &file, const std::string &section, const std::string &key) {
    for (const ConfigEntry &e : file.entries) {
        if (e.section == section && e.key == key) return &e;
    }
    return nullptr;
}

// A top-level string key, from the file, then the environment.
Setting string_setting(const ConfigFile &file, const char *key, const char *var, const char *default_value,
                       const char *help) {
    Setting s{"", key, var, "string", default_value, default_value, help, XFER_PARAM_DEFAULT};
    if (const ConfigEntry *e = find_top_level(file, key)) {
        s.value = e->value;
        s.source = XFER_PARAM_FILE;
    }
    if (auto v = env(var)) {
        s.value = *v;
        s.source = XFER_PARAM_ENV;
    }
    return s;
}

// The same for a key whose value is one of `choices` ("a|b|c"): a value that is not, in the file
// or the environment, is a config error naming where it came from.
Setting choice_setting(const ConfigFile &file, const char *key, const char *var, const char *default_value,
                       const std::string &choices, const char *help) {
    const auto check = [&](const std::string &value, const std::string &origin) {
        if (("|" + choices + "|").find("|" + value + "|") == std::string::npos) {
            raise(XFER_ERROR_CONFIG, origin, ": bad value '", value, "' for key '", key, "' (one of ", choices, ")");
        }
    };
    if (const ConfigEntry *e = find_top_level(file, key)) check(e->value, where(file, *e));
    if (auto v = env(var)) check(*v, msg("environment variable ", var));
    return string_setting(file, key, var, default_value, help);
}

} // namespace

std::string param_env_name(const std::string &backend, const std::string &param) {
    std::string name = "XFER_" + backend + "_" + param;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::isalnum(c) != 0 ? char(std::toupper(c)) : '_'; });
    return name;
}

std::vector<std::pair<std::string, std::string>> EffectiveConfig::backend_params(const std::string &backend) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Setting &s : settings) {
        if (s.section == backend) out.emplace_back(s.name, s.value);
    }
    for (const Setting &s : derived) {
        if (s.section == backend && s.source != XFER_PARAM_DEFAULT) out.emplace_back(s.name, s.value);
    }
    return out;
}

std::vector<Setting> EffectiveConfig::backend_settings(const std::string &backend) const {
    std::vector<Setting> out;
    for (const Setting &s : settings)
        if (s.section == backend) out.push_back(s);
    return out;
}

std::vector<Setting> EffectiveConfig::backend_derived(const std::string &backend) const {
    std::vector<Setting> out;
    for (const Setting &s : derived)
        if (s.section == backend) out.push_back(s);
    return out;
}

namespace {
constexpr const char *kCalibrationHelp =
    "where calibrations of this machine's copies are kept, one file per GPU: empty = $XDG_CACHE_HOME/xfer (else "
    "~/.cache/xfer), a folder, or off = none (the backends' declared defaults decide)";
}

std::string calibration_setting_now() {
    ConfigFile file;
    if (auto path = env("XFER_CONFIG")) file = read_config_file(*path);
    return string_setting(file, "calibration", "XFER_CALIBRATION", "", kCalibrationHelp).value;
}

EffectiveConfig load_effective_config(const char *requested, Opening opening) {
    EffectiveConfig cfg;
    if (auto path = env("XFER_CONFIG")) cfg.file = read_config_file(*path);
    const ConfigFile &file = cfg.file;
    check_top_level_keys(file);

    // backend
    Setting backend = string_setting(
        file, "backend", "XFER_BACKEND", "",
        "backend xfer_open(NULL, ...) uses; empty: the first available of pinned, pageable, managed, zerocopy, host");
    cfg.backend = backend.value;

    // device
    Setting device{
        "", "device", "XFER_DEVICE", "int", "0", "0", "device index xfer_open(..., -1, ...) uses", XFER_PARAM_DEFAULT};
    if (const ConfigEntry *e = find_top_level(file, "device")) {
        device.value = file_value(file, *e, "int");
        cfg.device = device_index(device.value, where(file, *e) + ": key 'device'");
        device.source = XFER_PARAM_FILE;
    }
    if (auto v = env("XFER_DEVICE")) {
        device.value = env_value("XFER_DEVICE", *v, "int");
        cfg.device = device_index(device.value, "environment variable XFER_DEVICE");
        device.source = XFER_PARAM_ENV;
    }

    // plugin_path: XFER_PLUGIN_PATH is searched first, then the file's plugin_path, then the
    // default folder. The row's value is the list actually searched, in order.
    const std::string default_dir = default_plugin_dir();
    Setting plugin_path{"",
                        "plugin_path",
                        "XFER_PLUGIN_PATH",
                        "string",
                        "",
                        default_dir,
                        "colon-separated absolute folders searched for plugins (XFER_PLUGIN_PATH first, then this key, "
                        "then lib/xfer next to libxfer.so); relative entries are ignored",
                        XFER_PARAM_DEFAULT};
    std::vector<std::string> dirs;
    if (auto v = env("XFER_PLUGIN_PATH")) {
        dirs = split_search_path(*v);
        plugin_path.source = XFER_PARAM_ENV;
    }
    if (const ConfigEntry *e = find_top_level(file, "plugin_path")) {
        for (std::string &d : split_search_path(e->value)) dirs.push_back(std::move(d));
        if (plugin_path.source == XFER_PARAM_DEFAULT) plugin_path.source = XFER_PARAM_FILE;
    }
    if (!default_dir.empty()) dirs.push_back(default_dir);
    for (const std::string &d : dirs) plugin_path.value += (plugin_path.value.empty() ? "" : ":") + d;

    // What copies report (xfer.h, "which path each copy took").
    Setting slow_path = choice_setting(file, "slow_path", "XFER_SLOW_PATH", "allow", "allow|warn|refuse",
                                       "what a copy that would take a slow path does (xfer_path_is_slow): allow = "
                                       "copy it, warn = copy it and log it, refuse = XFER_ERROR_SLOW_PATH");
    Setting log = choice_setting(file, "log", "XFER_LOG", "none", "none|copies",
                                 "copies = one line per copy call and path to log_file (the library prints nothing "
                                 "else)");
    Setting log_file =
        string_setting(file, "log_file", "XFER_LOG_FILE", "", "file the copy log is appended to; empty: stderr");
    cfg.slow_path = slow_path.value;
    cfg.log_copies = log.value == "copies";
    cfg.log_file = log_file.value;
    Setting calibration = string_setting(file, "calibration", "XFER_CALIBRATION", "", kCalibrationHelp);
    cfg.calibration = calibration.value;

    cfg.settings = {backend, device, plugin_path, slow_path, log, log_file, calibration};
    const std::string only = opening == Opening::every                    ? std::string()
                             : requested != nullptr && *requested != '\0' ? std::string(requested)
                                                                          : cfg.backend;
    cfg.discovery = discover_backends(dirs, only, default_dir);
    check_section_keys(file, cfg.discovery);

    // A declared value (parameter or derived) with what the file and the environment set.
    const auto declared_setting = [&](const Plugin &p, const xfer_backend_param &decl) {
        Setting s;
        s.section = p.name;
        s.name = decl.name;
        s.env = param_env_name(p.name, decl.name);
        s.type = decl.type;
        s.default_value = decl.default_value;
        s.help = decl.help != nullptr ? decl.help : "";
        std::string why;
        s.value = normalize_value(decl.type, decl.default_value, &why).value_or(decl.default_value);
        if (const ConfigEntry *e = find_in_section(file, p.name, decl.name)) {
            s.value = file_value(file, *e, decl.type);
            s.source = XFER_PARAM_FILE;
        }
        if (auto v = env(s.env)) {
            s.value = env_value(s.env, *v, decl.type);
            s.source = XFER_PARAM_ENV;
        }
        return s;
    };
    for (const FoundBackend &b : cfg.discovery.backends) {
        const Plugin &p = *b.plugin;
        if (!p.loaded()) continue;
        for (std::size_t i = 0; i < p.table.param_count; ++i)
            cfg.settings.push_back(declared_setting(p, p.table.params[i]));
        for (std::size_t i = 0; i < p.table.derived_count; ++i)
            cfg.derived.push_back(declared_setting(p, p.table.derived[i]));
    }
    for (FoundBackend &b : cfg.discovery.backends) probe_with_params(b, cfg.backend_params(b.plugin->name));
    return cfg;
}

} // namespace xfer::core

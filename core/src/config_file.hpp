// Reading the XFER_CONFIG file: INI text with [sections], parsed by Boost.Program_options.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace xfer::core {

// One `key = value` line. section is "" before the first [section].
struct ConfigEntry {
    std::string section;
    std::string key;
    std::string value;
    int line = 0;  // 1-based
};

struct ConfigFile {
    std::string path;  // "" when no file is named (defaults only)
    std::vector<ConfigEntry> entries;
};

// Parses INI text. `source` names it in messages (the file path). Throws Error
// (XFER_ERROR_CONFIG) naming the line for malformed lines, empty keys, bad section names and
// keys set twice in one section. Comments start at '#' (as in Boost.Program_options).
ConfigFile parse_config(std::istream &in, const std::string &source);

// Reads and parses `path`; a missing or unreadable file is XFER_ERROR_CONFIG.
ConfigFile read_config_file(const std::string &path);

}  // namespace xfer::core

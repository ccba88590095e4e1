// SPDX-License-Identifier: Apache-2.0
// Reading the XFER_CONFIG file: INI text with [sections], every key kept with its line so that
// each message names it ("FILE:LINE: ...").
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace xfer::core {

// One `key = value` line. section is "" before the first [section].
struct ConfigEntry {
    std::string section;
    std::string key;
    std::string value;
    int line = 0; // 1-based
};

struct ConfigFile {
    std::string path; // "" when no file is named (defaults only)
    std::vector<ConfigEntry> entries;
};

// Parses INI text. `source` names it in messages (the file path). Throws Error
// (XFER_ERROR_CONFIG) naming the line for malformed lines, empty keys, bad section names and
// keys set twice in one section. '#' starts a comment anywhere in a line (there is no escape);
// blanks around a line, a key and a value are trimmed; a value may be empty.
ConfigFile parse_config(std::istream &in, const std::string &source);

// The largest configuration file read (1 MiB): a real one has a few dozen lines, and the file
// is read at every xfer_open.
constexpr std::size_t kMaxConfigBytes = std::size_t(1) << 20;

// Reads and parses `path`. XFER_ERROR_CONFIG when it is missing or unreadable, not a regular
// file (a FIFO, a directory, a device), larger than kMaxConfigBytes, or contains a NUL byte.
ConfigFile read_config_file(const std::string &path);

} // namespace xfer::core

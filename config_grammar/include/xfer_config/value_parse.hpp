// SPDX-License-Identifier: Apache-2.0
// Parsing of configuration values by declared type: int, size, bool, string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xfer::core {

// A byte count: plain digits, optionally followed (spaces allowed) by a unit:
// B; KiB, MiB, GiB, TiB (powers of 1024); KB, MB, GB, TB (powers of 1000).
// Units are case-sensitive on purpose: "mb" vs "Mb" vs "MiB" is exactly the ambiguity the
// units exist to remove. Fractions ("1.5GiB"), signs and overflow past 2^64-1 are rejected.
// On failure returns nullopt and sets *why.
std::optional<std::uint64_t> parse_size(std::string_view text, std::string *why);

// A decimal int (optional leading '-'), whole text, within int's range.
std::optional<int> parse_int(std::string_view text, std::string *why);

// true/false, 1/0, yes/no, on/off (any letter case).
std::optional<bool> parse_bool(std::string_view text, std::string *why);

// True for the types a backend may declare: "int", "size", "bool", "string".
bool is_known_param_type(std::string_view type);

// Validates `text` against `type` and returns the canonical form handed to backends:
// sizes as decimal bytes, bools as "0"/"1", ints as decimal, strings unchanged.
std::optional<std::string> normalize_value(std::string_view type, std::string_view text, std::string *why);

// Removes leading and trailing blanks (space, tab, CR, LF).
std::string_view trim(std::string_view text);

} // namespace xfer::core

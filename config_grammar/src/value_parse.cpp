// SPDX-License-Identifier: Apache-2.0
#include "xfer_config/value_parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace xfer::core {
namespace {

struct Unit {
    std::string_view suffix;
    std::uint64_t multiplier;
};

constexpr std::uint64_t kKi = 1024ull;
constexpr std::uint64_t kK = 1000ull;

constexpr Unit kUnits[] = {
    {"B", 1},   {"KiB", kKi},   {"MiB", kKi *kKi},  {"GiB", kKi *kKi *kKi}, {"TiB", kKi *kKi *kKi *kKi},
    {"KB", kK}, {"MB", kK *kK}, {"GB", kK *kK *kK}, {"TB", kK *kK *kK *kK},
};

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

} // namespace

std::string_view trim(std::string_view text) {
    const char *blanks = " \t\r\n";
    auto first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    auto last = text.find_last_not_of(blanks);
    return text.substr(first, last - first + 1);
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::string *why) {
    text = trim(text);
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
    if (digits == 0) {
        *why = "a size must start with a whole number of bytes (e.g. 4096, 8MiB, 1GB)";
        return std::nullopt;
    }
    std::uint64_t number = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
    if (ec == std::errc::result_out_of_range) {
        *why = "the number is too large (more than 2^64-1 bytes)";
        return std::nullopt;
    }
    (void)end;
    std::string_view suffix = trim(text.substr(digits));
    std::uint64_t multiplier = 1;
    if (!suffix.empty() && suffix.front() == '.') {
        *why = "fractional sizes are not supported (write 1536MiB, not 1.5GiB)";
        return std::nullopt;
    }
    if (!suffix.empty()) {
        auto unit =
            std::find_if(std::begin(kUnits), std::end(kUnits), [&](const Unit &u) { return u.suffix == suffix; });
        if (unit == std::end(kUnits)) {
            *why = "unknown size unit '" + std::string(suffix) +
                   "' (use B, KiB, MiB, GiB, TiB = powers of 1024, or KB, MB, GB, TB = powers of 1000)";
            return std::nullopt;
        }
        multiplier = unit->multiplier;
    }
    if (number > std::numeric_limits<std::uint64_t>::max() / multiplier) {
        *why = "the size overflows 64 bits";
        return std::nullopt;
    }
    return number * multiplier;
}

std::optional<int> parse_int(std::string_view text, std::string *why) {
    text = trim(text);
    std::string_view magnitude = !text.empty() && text.front() == '-' ? text.substr(1) : text;
    if (!all_digits(magnitude)) {
        *why = "not a whole number";
        return std::nullopt;
    }
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
        *why = "out of the range of int";
        return std::nullopt;
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
        *why = "not a whole number";
        return std::nullopt;
    }
    return value;
}

std::optional<bool> parse_bool(std::string_view text, std::string *why) {
    std::string word = lower(trim(text));
    if (word == "true" || word == "1" || word == "yes" || word == "on") return true;
    if (word == "false" || word == "0" || word == "no" || word == "off") return false;
    *why = "not a boolean (use true/false, 1/0, yes/no, on/off)";
    return std::nullopt;
}

bool is_known_param_type(std::string_view type) {
    return type == "int" || type == "size" || type == "bool" || type == "string";
}

std::optional<std::string> normalize_value(std::string_view type, std::string_view text, std::string *why) {
    if (type == "size") {
        auto v = parse_size(text, why);
        if (!v) return std::nullopt;
        return std::to_string(*v);
    }
    if (type == "int") {
        auto v = parse_int(text, why);
        if (!v) return std::nullopt;
        return std::to_string(*v);
    }
    if (type == "bool") {
        auto v = parse_bool(text, why);
        if (!v) return std::nullopt;
        return std::string(*v ? "1" : "0");
    }
    if (type == "string") return std::string(text);
    *why = "unknown parameter type '" + std::string(type) + "'";
    return std::nullopt;
}

} // namespace xfer::core

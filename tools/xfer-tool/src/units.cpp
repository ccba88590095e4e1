// SPDX-License-Identifier: Apache-2.0
#include "units.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>

#include "xfer_config/value_parse.hpp" // the library's grammar (xfer_config_grammar)

namespace xfer::tool {
namespace {

std::string trim(const std::string &s) { return std::string(xfer::core::trim(s)); }

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        parts.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos) return parts;
        start = pos + 1;
    }
}

// The start of a long option value, for messages (a list of thousands of sizes is not repeated).
std::string excerpt(const std::string &text) {
    constexpr std::size_t kShown = 40;
    return text.size() <= kShown ? text : text.substr(0, kShown) + "...";
}

std::invalid_argument too_many_points(const std::string &what, std::uint64_t points, const char *remedy) {
    return std::invalid_argument(what + " has " + std::to_string(points) + " sizes, more than the limit of " +
                                 std::to_string(kMaxSizeListPoints) + " (" + remedy + ")");
}

} // namespace

std::uint64_t parse_size(const std::string &raw) {
    // The library's grammar (config_grammar/src/value_parse.cpp), so a size the tool accepts is one a
    // configuration file accepts too; only "zero bytes" is the tool's own rule.
    std::string why;
    const std::optional<std::uint64_t> bytes = xfer::core::parse_size(raw, &why);
    if (!bytes) throw std::invalid_argument("'" + raw + "': " + why);
    if (*bytes == 0) throw std::invalid_argument("'" + raw + "' is zero bytes; sizes must be at least 1 byte");
    return *bytes;
}

std::vector<std::uint64_t> parse_size_list(const std::string &text) {
    std::vector<std::uint64_t> sizes;
    if (text.find(':') != std::string::npos) {
        std::vector<std::string> parts = split(text, ':');
        if (parts.size() < 2 || parts.size() > 3)
            throw std::invalid_argument("'" + text +
                                        "' is not a range FROM:TO[:FACTOR|:xFACTOR|:+STEP] "
                                        "(e.g. 1KiB:1GiB:4, 1GiB:8GiB:+1GiB)");
        const std::uint64_t from = parse_size(parts[0]);
        const std::uint64_t to = parse_size(parts[1]);
        if (from > to) throw std::invalid_argument("range '" + text + "' runs backwards (FROM is larger than TO)");
        std::string step = parts.size() == 3 ? trim(parts[2]) : std::string("4");
        if (!step.empty() && step.front() == '+') {
            // Linear: FROM, FROM+STEP, ... up to TO.
            const std::uint64_t add = parse_size(step.substr(1));
            // (to - from) / add + 1 cannot overflow: to - from < 2^64 - 1 and add >= 1.
            const std::uint64_t points = (to - from) / add + 1;
            if (points > kMaxSizeListPoints)
                throw too_many_points("range '" + excerpt(text) + "'", points,
                                      "use a larger step or a geometric range FROM:TO:FACTOR");
            sizes.reserve(static_cast<std::size_t>(points));
            for (std::uint64_t s = from; s <= to; s += add) {
                sizes.push_back(s);
                if (s > std::numeric_limits<std::uint64_t>::max() - add) break;
            }
            return sizes;
        }
        if (!step.empty() && (step.front() == 'x' || step.front() == '*')) step.erase(0, 1);
        std::string why;
        const std::optional<int> factor = xfer::core::parse_int(step, &why);
        if (!factor || *factor < 2)
            throw std::invalid_argument("range factor '" + parts[2] +
                                        "' must be an integer >= 2 (geometric) or +SIZE (linear step)");
        for (std::uint64_t s = from; s <= to; s *= static_cast<std::uint64_t>(*factor)) {
            sizes.push_back(s);
            if (s > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(*factor)) break;
        }
        return sizes;
    }
    const std::vector<std::string> parts = split(text, ',');
    if (parts.size() > kMaxSizeListPoints)
        throw too_many_points("list '" + excerpt(text) + "'", parts.size(), "measure fewer sizes");
    for (const std::string &part : parts) {
        if (trim(part).empty())
            throw std::invalid_argument("'" + text + "' has an empty entry; separate sizes with commas");
        sizes.push_back(parse_size(part));
    }
    return sizes;
}

std::vector<std::uint64_t> default_sweep_sizes() { return parse_size_list("1KiB:1GiB:4"); }

std::string format_size(std::uint64_t bytes) {
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double value = static_cast<double>(bytes);
    while (unit < 4 && value >= 1024.0) {
        value /= 1024.0;
        ++unit;
    }
    char text[64];
    if (unit == 0 || value == std::floor(value)) {
        std::snprintf(text, sizeof text, "%.0f %s", value, names[unit]);
    } else {
        std::snprintf(text, sizeof text, "%.2f", value);
        std::string s = text;
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s + " " + names[unit];
    }
    return text;
}

double gb_per_s(std::uint64_t bytes, double ms) {
    if (ms <= 0.0) return std::numeric_limits<double>::infinity();
    return static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

std::string format_value(double value) {
    if (!std::isfinite(value)) return std::isnan(value) ? "n/a" : "inf";
    if (value == 0.0) return "0";
    int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
    int decimals = std::min(6, std::max(0, 3 - magnitude));
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

} // namespace xfer::tool

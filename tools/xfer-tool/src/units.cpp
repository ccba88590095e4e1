#include "units.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace xfer_tool {
namespace {

struct Unit {
    const char *suffix;
    std::uint64_t factor;
};

// Longest suffixes first so "KiB" is not read as "B".
constexpr Unit kUnits[] = {
    {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"TiB", 1ull << 40},
    {"KB", 1000ull},     {"MB", 1000000ull},  {"GB", 1000000000ull}, {"TB", 1000000000000ull},
    {"B", 1ull},
};

std::string trim(const std::string &s)
{
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        parts.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos)
            return parts;
        start = pos + 1;
    }
}

} // namespace

std::uint64_t parse_size(const std::string &raw)
{
    const std::string text = trim(raw);
    const std::string hint = " (use e.g. 4096, 4KiB, 256MiB, 1GiB, or 1GB = 10^9 bytes)";
    size_t digits = 0;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
        ++digits;
    if (digits == 0)
        throw std::invalid_argument("'" + raw + "' is not a size" + hint);
    const std::string number = text.substr(0, digits);
    const std::string suffix = trim(text.substr(digits));

    std::uint64_t factor = 1;
    if (!suffix.empty()) {
        bool known = false;
        for (const Unit &u : kUnits)
            if (suffix == u.suffix) {
                factor = u.factor;
                known = true;
                break;
            }
        if (!known)
            throw std::invalid_argument("'" + raw + "' has an unknown unit '" + suffix + "'" + hint);
    }

    std::uint64_t bytes = 0;
    if (number.find('.') == std::string::npos) {
        errno = 0;
        char *end = nullptr;
        unsigned long long value = std::strtoull(number.c_str(), &end, 10);
        if (errno == ERANGE || value > std::numeric_limits<std::uint64_t>::max() / factor)
            throw std::invalid_argument("'" + raw + "' is too large");
        bytes = value * factor;
    } else {
        // Fractions ("1.5MiB") must come out as whole bytes.
        char *end = nullptr;
        double value = std::strtod(number.c_str(), &end);
        if (end != number.c_str() + number.size())
            throw std::invalid_argument("'" + raw + "' is not a size" + hint);
        double exact = value * static_cast<double>(factor);
        if (exact >= 1.8e19)
            throw std::invalid_argument("'" + raw + "' is too large");
        if (exact != std::floor(exact))
            throw std::invalid_argument("'" + raw + "' is not a whole number of bytes");
        bytes = static_cast<std::uint64_t>(exact);
    }
    if (bytes == 0)
        throw std::invalid_argument("'" + raw + "' is zero bytes; sizes must be at least 1 byte");
    return bytes;
}

std::vector<std::uint64_t> parse_size_list(const std::string &text)
{
    std::vector<std::uint64_t> sizes;
    if (text.find(':') != std::string::npos) {
        std::vector<std::string> parts = split(text, ':');
        if (parts.size() < 2 || parts.size() > 3)
            throw std::invalid_argument("'" + text + "' is not a range FROM:TO[:FACTOR] (e.g. 1KiB:1GiB:4)");
        std::uint64_t from = parse_size(parts[0]);
        std::uint64_t to = parse_size(parts[1]);
        std::uint64_t factor = 4;
        if (parts.size() == 3) {
            const std::string f = trim(parts[2]);
            char *end = nullptr;
            unsigned long long v = std::strtoull(f.c_str(), &end, 10);
            if (f.empty() || *end != '\0' || v < 2)
                throw std::invalid_argument("range factor '" + parts[2] + "' must be an integer >= 2");
            factor = v;
        }
        if (from > to)
            throw std::invalid_argument("range '" + text + "' runs backwards (FROM is larger than TO)");
        for (std::uint64_t s = from; s <= to; s *= factor) {
            sizes.push_back(s);
            if (s > std::numeric_limits<std::uint64_t>::max() / factor)
                break;
        }
        return sizes;
    }
    for (const std::string &part : split(text, ',')) {
        if (trim(part).empty())
            throw std::invalid_argument("'" + text + "' has an empty entry; separate sizes with commas");
        sizes.push_back(parse_size(part));
    }
    return sizes;
}

std::vector<std::uint64_t> default_sweep_sizes()
{
    return parse_size_list("1KiB:1GiB:4");
}

std::string format_size(std::uint64_t bytes)
{
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
        while (s.back() == '0')
            s.pop_back();
        if (s.back() == '.')
            s.pop_back();
        return s + " " + names[unit];
    }
    return text;
}

double gb_per_s(std::uint64_t bytes, double ms)
{
    if (ms <= 0.0)
        return std::numeric_limits<double>::infinity();
    return static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

std::string format_value(double value)
{
    if (!std::isfinite(value))
        return std::isnan(value) ? "n/a" : "inf";
    if (value == 0.0)
        return "0";
    int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
    int decimals = std::min(6, std::max(0, 3 - magnitude));
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

} // namespace xfer_tool

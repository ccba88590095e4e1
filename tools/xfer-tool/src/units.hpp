// SPDX-License-Identifier: Apache-2.0
// Sizes and rates as users type and read them. GB/s = 10^9 B/s; KiB/MiB/GiB = 2^10/2^20/2^30 B;
// KB/MB/GB = 10^3/10^6/10^9 B, as in the library's configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xfer::tool {

// "256MiB", "4 KiB", "1GB", "4096" (bytes), "512B": the library's size grammar (whole numbers,
// case-sensitive units; "1.5GiB" is refused as in a configuration file). Throws
// std::invalid_argument saying what is wrong (unknown unit, fraction, zero, overflow).
std::uint64_t parse_size(const std::string &text);

// The most sizes one list or range may name. Every size is a measurement of its own (buffers,
// repeats, verification), so a list this long already runs for hours; a linear range with a
// tiny step ("1:99999TiB:+1") would otherwise grow the list until memory runs out.
constexpr std::size_t kMaxSizeListPoints = 10000;

// A comma-separated list ("1KiB,64KiB,1MiB"), a geometric range FROM:TO[:FACTOR] or
// FROM:TO:xFACTOR ("1KiB:1GiB:4", factor 4 when left out) or a linear range FROM:TO:+STEP
// ("1GiB:4GiB:+512MiB"), of at most kMaxSizeListPoints sizes (counted before anything is
// allocated). Throws std::invalid_argument.
std::vector<std::uint64_t> parse_size_list(const std::string &text);

// The default bandwidth sweep of the issue: 1 KiB to 1 GiB by powers of 4.
std::vector<std::uint64_t> default_sweep_sizes();

// "1000 B", "4 KiB", "1.5 MiB", "1 GiB": binary units, at most two decimals.
std::string format_size(std::uint64_t bytes);

// Bytes moved in `ms` milliseconds as GB/s (10^9 B/s).
double gb_per_s(std::uint64_t bytes, double ms);

// Four significant digits, no exponent: 12.35, 0.01234, 12346.
std::string format_value(double value);

} // namespace xfer::tool

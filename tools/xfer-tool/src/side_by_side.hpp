// SPDX-License-Identifier: Apache-2.0
// xfer against the raw call it wraps, measured interleaved in one repeats loop and reported as
// ratios: the machines are noisy and absolute times drift (DESIGN.md, "Measuring"), but two
// calls timed back to back see the same machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result.hpp"

namespace xfer::tool {

std::string raw_figure_name(const std::string &direction);   // "raw h2d"
std::string ratio_figure_name(const std::string &direction); // "h2d xfer / raw"

// Per-repeat ratios raw_ms[i] / xfer_ms[i] (> 1: xfer was faster), pairing the samples that
// were measured back to back. Pairs with a time of 0 (below the timer's resolution) have no
// finite ratio and are left out. Throws std::invalid_argument when the counts differ.
std::vector<double> speed_ratios(const std::vector<double> &xfer_ms, const std::vector<double> &raw_ms);

// The "x" figure of speed_ratios (min / median / max of the pairs); n/a when no pair is usable.
Figure ratio_figure(const std::string &direction, std::uint64_t bytes, const std::vector<double> &xfer_ms,
                    const std::vector<double> &raw_ms, const std::string &raw_call);

// The side-by-side figures of one direction and size: the raw call's GB/s and the ratio.
// raw_ms empty (std::nullopt): the backend has no raw equivalent; both figures are n/a and
// their note, `raw_call`, says why.
std::vector<Figure> side_by_side_figures(const std::string &direction, std::uint64_t bytes,
                                         const std::vector<double> &xfer_ms,
                                         const std::optional<std::vector<double>> &raw_ms, const std::string &raw_call);

} // namespace xfer::tool

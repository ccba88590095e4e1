// SPDX-License-Identifier: Apache-2.0
#include "side_by_side.hpp"

#include <stdexcept>

#include "figures.hpp"

namespace xfer::tool {

std::string raw_figure_name(const std::string &direction) { return "raw " + direction; }

std::string ratio_figure_name(const std::string &direction) { return direction + " xfer / raw"; }

std::vector<double> speed_ratios(const std::vector<double> &xfer_ms, const std::vector<double> &raw_ms) {
    if (xfer_ms.size() != raw_ms.size())
        throw std::invalid_argument("speed_ratios: " + std::to_string(xfer_ms.size()) + " xfer samples but " +
                                    std::to_string(raw_ms.size()) + " raw samples; they must pair up");
    std::vector<double> ratios;
    ratios.reserve(xfer_ms.size());
    for (std::size_t i = 0; i < xfer_ms.size(); ++i)
        if (xfer_ms[i] > 0.0 && raw_ms[i] > 0.0) ratios.push_back(raw_ms[i] / xfer_ms[i]);
    return ratios;
}

Figure ratio_figure(const std::string &direction, std::uint64_t bytes, const std::vector<double> &xfer_ms,
                    const std::vector<double> &raw_ms, const std::string &raw_call) {
    const std::string name = ratio_figure_name(direction);
    const std::vector<double> ratios = speed_ratios(xfer_ms, raw_ms);
    if (ratios.empty()) return absent_figure(name, "x", bytes, "too short for the event timer");
    // A ratio of medians would pair samples from different moments; per-pair ratios do not.
    Figure f = value_figure(name, "x", ratios, "raw ms / xfer ms per repeat (> 1: xfer faster) vs " + raw_call);
    f.bytes = bytes;
    return f;
}

std::vector<Figure> side_by_side_figures(const std::string &direction, std::uint64_t bytes,
                                         const std::vector<double> &xfer_ms,
                                         const std::optional<std::vector<double>> &raw_ms,
                                         const std::string &raw_call) {
    if (!raw_ms)
        return {absent_figure(raw_figure_name(direction), "GB/s", bytes, raw_call),
                absent_figure(ratio_figure_name(direction), "x", bytes, raw_call)};
    Figure raw = rate_figure(raw_figure_name(direction), bytes, *raw_ms, "raw: " + raw_call);
    raw.bytes = bytes;
    return {raw, ratio_figure(direction, bytes, xfer_ms, *raw_ms, raw_call)};
}

} // namespace xfer::tool

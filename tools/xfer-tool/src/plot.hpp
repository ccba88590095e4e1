// `plot`: bandwidth against transfer size, one line per backend and direction, drawn by
// gnuplot (the Debian package gnuplot-nox): the tool writes the data and a script, then runs
// gnuplot as a subprocess. XFER_TOOL_GNUPLOT names another gnuplot executable.
#pragma once

#include "result.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace xfer_tool {

struct PlotPoint {
    std::uint64_t bytes;
    double median, min, max; // GB/s
};

struct PlotSeries {
    std::string title;     // "pinned h2d"
    std::string backend;   // "pinned": one colour per backend
    std::string direction; // "h2d": one dash and point style per direction
    std::vector<PlotPoint> points;
};

// The GB/s figures of every bandwidth result, one series per backend and direction; the raw
// calls' figures ("raw h2d") are left out (plot.cpp says why).
std::vector<PlotSeries> bandwidth_series(const Report &report);

// "png" or "svg" from the output file's extension; throws std::invalid_argument otherwise.
std::string plot_format(const std::string &output);

// The gnuplot data file (one block per series, separated by two blank lines) and script.
std::string gnuplot_data(const std::vector<PlotSeries> &series);
std::string gnuplot_script(const std::vector<PlotSeries> &series, const std::string &data_path,
                           const std::string &output, const std::string &format);

// Writes `output` (.png or .svg). Throws std::runtime_error saying what went wrong: no
// bandwidth data, gnuplot not installed, or gnuplot's own error output.
void plot_bandwidth(const Report &report, const std::string &output);

} // namespace xfer_tool

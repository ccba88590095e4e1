// SPDX-License-Identifier: Apache-2.0
// `plot`: bandwidth against transfer size, one line per backend and direction, drawn by
// gnuplot (the Debian package gnuplot-nox): the tool writes the data and a script, then runs
// gnuplot as a subprocess. XFER_TOOL_GNUPLOT names another gnuplot executable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "output_file.hpp"
#include "result.hpp"

namespace xfer::tool {

struct PlotPoint {
    std::uint64_t bytes;
    double median, min, max; // GB/s
};

struct PlotSeries {
    std::string title;     // "pinned h2d", "pinned raw h2d"
    std::string backend;   // "pinned": one colour per backend
    std::string direction; // "h2d": one dash and point style per direction
    std::vector<PlotPoint> points;
    bool raw = false; // the raw call's line: thin and dotted beside xfer's
};

// The GB/s figures of every bandwidth result, one series per backend and direction, and the
// raw calls' ("raw h2d") beside them where the report has them.
std::vector<PlotSeries> bandwidth_series(const Report &report);

// "xfer-tool 1.0.0 (commit ...), NVIDIA H200, 2026-12-01": what the plot's title carries.
std::string plot_subtitle(const Report &report);

// One box of the overlap timeline: a Chrome trace "X" event on a track.
struct TimelineBox {
    std::string track;    // "pinned: stream 1"
    std::string category; // copy | kernel | prefetch | host | ...
    double start_ms, end_ms;
};

// The boxes of a Chrome trace written by --trace (track = process name + thread name), times
// relative to the first event. Throws std::runtime_error when it holds no complete events.
std::vector<TimelineBox> timeline_boxes(const nlohmann::json &trace);
std::string overlap_script(const std::vector<TimelineBox> &boxes, const std::string &data_path,
                           const std::string &output, const std::string &format, const std::string &title);

// Writes the timeline of a trace as a PNG/SVG: one row per stream, one box per span. The
// image is an OutputFile: it replaces an earlier file at `output` only once gnuplot is done.
void plot_overlap(const nlohmann::json &trace, const std::string &output);
// The same into `image` (its path() gives the format), committed at the end; throws
// Interrupted instead of committing after SIGINT / SIGTERM.
void plot_overlap(const nlohmann::json &trace, OutputFile &image);

// "png" or "svg" from the output file's extension; throws std::invalid_argument otherwise.
std::string plot_format(const std::string &output);

// The gnuplot data file (one block per series, separated by two blank lines) and script.
std::string gnuplot_data(const std::vector<PlotSeries> &series);
std::string gnuplot_script(const std::vector<PlotSeries> &series, const std::string &data_path,
                           const std::string &output, const std::string &format, const std::string &subtitle = "");

// Writes `output` (.png or .svg) as an OutputFile. Throws std::runtime_error saying what went
// wrong: no bandwidth data, gnuplot not installed, or gnuplot's own error output.
void plot_bandwidth(const Report &report, const std::string &output);
// The same into `image`, as plot_overlap's second form.
void plot_bandwidth(const Report &report, OutputFile &image);

} // namespace xfer::tool

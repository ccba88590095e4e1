// SPDX-License-Identifier: Apache-2.0
// The gnuplot data and script that `plot` writes (the drawing itself is a CTest).
#include <stdexcept>

#include <gtest/gtest.h>

#include "plot.hpp"

using namespace xfer::tool;

namespace {

WorkflowResult bandwidth(const std::string &backend) {
    WorkflowResult r;
    r.workflow = "bandwidth";
    r.backend = backend;
    r.figures.push_back(Figure{"h2d", "GB/s", 1024, Stats{1.0, 2.0, 3.0, 3}, ""});
    r.figures.push_back(Figure{"h2d", "ms", 1024, Stats{0.1, 0.2, 0.3, 3}, ""});
    r.figures.push_back(Figure{"h2d", "GB/s", 4096, Stats{4.0, 5.0, 6.0, 3}, ""});
    r.figures.push_back(Figure{"d2h", "GB/s", 1024, std::nullopt, "no copy (mapped)"});
    r.figures.push_back(Figure{"d2h", "GB/s", 4096, Stats{7.0, 8.0, 9.0, 3}, ""});
    // The side-by-side figures: the raw call's line is drawn beside xfer's; ratios are not GB/s.
    r.figures.push_back(Figure{"raw h2d", "GB/s", 4096, Stats{4.5, 5.5, 6.5, 3}, "raw: std::memcpy"});
    r.figures.push_back(Figure{"h2d xfer / raw", "x", 4096, Stats{0.9, 1.0, 1.1, 3}, ""});
    return r;
}

} // namespace

TEST(Plot, OneSeriesPerBackendAndDirection) {
    Report report;
    report.results = {bandwidth("host"), bandwidth("pinned")};
    WorkflowResult other;
    other.workflow = "roundtrip";
    other.backend = "host";
    other.figures.push_back(Figure{"h2d", "GB/s", 1024, Stats{1, 1, 1, 1}, ""});
    report.results.push_back(other);

    auto series = bandwidth_series(report);
    ASSERT_EQ(series.size(), 6u); // h2d, d2h and raw h2d per backend
    EXPECT_EQ(series[0].title, "host h2d");
    EXPECT_FALSE(series[0].raw);
    EXPECT_EQ(series[2].title, "host raw h2d");
    EXPECT_TRUE(series[2].raw);
    EXPECT_EQ(series[2].direction, "h2d"); // the same dash family as xfer's h2d
    ASSERT_EQ(series[2].points.size(), 1u);
    EXPECT_DOUBLE_EQ(series[2].points[0].median, 5.5);
    ASSERT_EQ(series[0].points.size(), 2u);
    EXPECT_EQ(series[0].points[1].bytes, 4096u);
    EXPECT_DOUBLE_EQ(series[0].points[1].median, 5.0);
    EXPECT_EQ(series[1].title, "host d2h");
    EXPECT_EQ(series[1].points.size(), 1u); // the unmeasured point is left out
    EXPECT_EQ(series[4].title, "pinned d2h");
}

TEST(Plot, DataBlocksAndScript) {
    Report report;
    report.results = {bandwidth("host")};
    auto series = bandwidth_series(report);
    EXPECT_EQ(gnuplot_data(series), "# host h2d\n# bytes median_GBps min_GBps max_GBps\n1024 2 1 3\n4096 5 4 6\n\n\n"
                                    "# host d2h\n# bytes median_GBps min_GBps max_GBps\n4096 8 7 9\n\n\n"
                                    "# host raw h2d\n# bytes median_GBps min_GBps max_GBps\n4096 5.5 4.5 6.5\n\n\n");
    const std::string png = gnuplot_script(series, "/tmp/d.dat", "/tmp/it's.png", "png");
    EXPECT_NE(png.find("set terminal pngcairo"), std::string::npos);
    EXPECT_NE(png.find("set output '/tmp/it''s.png'"), std::string::npos) << png;
    EXPECT_NE(png.find("set logscale x 2"), std::string::npos);
    EXPECT_NE(png.find("GB/s = 10^9 bytes/s"), std::string::npos);
    EXPECT_NE(png.find("set xtics rotate by -45 ('1 KiB' 1024, '4 KiB' 4096)"), std::string::npos) << png;
    // One colour per backend, one dash and point style per direction.
    EXPECT_NE(png.find("'/tmp/d.dat' index 0 using 1:2:3:4 with yerrorlines linewidth 2 linecolor rgb '#1b9e77' "
                       "dashtype 1 pointtype 5 title 'host h2d'"),
              std::string::npos)
        << png;
    EXPECT_NE(png.find("index 1 using 1:2:3:4 with yerrorlines linewidth 2 linecolor rgb '#1b9e77' "
                       "dashtype 2 pointtype 6 title 'host d2h'"),
              std::string::npos)
        << png;
    EXPECT_NE(png.find("set xrange [682.667:6144]"), std::string::npos) << png; // room for the end labels
    EXPECT_NE(gnuplot_script(series, "d", "o.svg", "svg").find("set terminal svg"), std::string::npos);
}

TEST(Plot, FormatComesFromTheExtension) {
    EXPECT_EQ(plot_format("a.png"), "png");
    EXPECT_EQ(plot_format("dir/A.SVG"), "svg");
    EXPECT_THROW(plot_format("a.jpg"), std::invalid_argument);
    EXPECT_THROW(plot_format("noext"), std::invalid_argument);
}

TEST(Plot, NothingToPlotIsAnError) {
    Report report;
    try {
        plot_bandwidth(report, "/tmp/never-written.png");
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("no bandwidth figures"), std::string::npos) << e.what();
    }
}

TEST(Plot, RawLinesAreThinAndDottedAndTheTitleNamesTheRun) {
    Report report;
    report.tool_version = "1.0.0";
    report.run.commit = "abc123";
    report.run.time = "2026-12-01T10:00:00Z";
    report.run.host = "node7";
    WorkflowResult r = bandwidth("pinned");
    r.device.name = "NVIDIA H200";
    r.device.kind = "cuda";
    r.device.pcie_link = "Gen5 x16";
    report.results = {r};
    EXPECT_EQ(plot_subtitle(report), "xfer-tool 1.0.0 (abc123), NVIDIA H200 Gen5 x16, 2026-12-01, node7");
    const auto series = bandwidth_series(report);
    const std::string script = gnuplot_script(series, "d", "o.png", "png", plot_subtitle(report));
    EXPECT_NE(script.find("index 2 using 1:2 with linespoints linewidth 1 linecolor rgb '#1b9e77' dashtype 3"),
              std::string::npos)
        << script;
    EXPECT_NE(script.find("\\nxfer-tool 1.0.0 (abc123), NVIDIA H200 Gen5 x16, 2026-12-01, node7\""), std::string::npos)
        << script;
}

TEST(Plot, OverlapTimelineFromATrace) {
    nlohmann::json trace = {
        {"traceEvents",
         {{{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "xfer host (device 0)"}}}},
          {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "stream 1"}}}},
          {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 2}, {"args", {{"name", "stream 2"}}}},
          {{"ph", "X"}, {"name", "h2d"}, {"cat", "copy"}, {"pid", 1}, {"tid", 1}, {"ts", 1000.0}, {"dur", 500.0}},
          {{"ph", "X"},
           {"name", "scale"},
           {"cat", "kernel"},
           {"pid", 1},
           {"tid", 2},
           {"ts", 1200.0},
           {"dur", 1000.0}}}}};
    const auto boxes = timeline_boxes(trace);
    ASSERT_EQ(boxes.size(), 2u);
    EXPECT_EQ(boxes[0].track, "host: stream 1");
    EXPECT_EQ(boxes[0].category, "copy");
    EXPECT_DOUBLE_EQ(boxes[0].start_ms, 0.0);
    EXPECT_DOUBLE_EQ(boxes[0].end_ms, 0.5);
    EXPECT_EQ(boxes[1].track, "host: stream 2");
    EXPECT_DOUBLE_EQ(boxes[1].start_ms, 0.2);
    EXPECT_DOUBLE_EQ(boxes[1].end_ms, 1.2);
    const std::string script = overlap_script(boxes, "d", "o.png", "png", "t");
    EXPECT_NE(script.find("set ytics ('host: stream 1' 0, 'host: stream 2' 1)"), std::string::npos) << script;
    EXPECT_NE(script.find("with boxxyerror"), std::string::npos) << script;
    EXPECT_THROW(timeline_boxes(nlohmann::json::object()), std::runtime_error);
}

// SPDX-License-Identifier: Apache-2.0
#include "plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "interrupt.hpp"
#include "units.hpp"

extern char **environ;

namespace xfer::tool {
namespace {

// gnuplot single-quoted strings: a quote is written twice.
std::string quoted(const std::string &text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

// gnuplot double-quoted strings: the only kind where "\n" starts a new line (for titles).
std::string double_quoted(const std::string &text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string read_file(const std::filesystem::path &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Removes the working folder however plot_bandwidth leaves.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "xfer-tool-plot-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            throw std::runtime_error("cannot create a temporary folder for gnuplot: " +
                                     std::string(std::strerror(errno)));
        path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

void run_gnuplot(const std::filesystem::path &script, const std::filesystem::path &log) {
    const char *env = std::getenv("XFER_TOOL_GNUPLOT");
    const std::string program = env && *env ? env : "gnuplot";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::string script_arg = script.string();
    char *argv[] = {const_cast<char *>(program.c_str()), script_arg.data(), nullptr};
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == ENOENT)
        throw std::runtime_error("'" + program +
                                 "' was not found on PATH: install gnuplot (Debian: apt-get install "
                                 "gnuplot-nox) or set XFER_TOOL_GNUPLOT to its path");
    if (rc != 0) throw std::runtime_error("cannot start '" + program + "': " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw std::runtime_error("waiting for gnuplot failed: " + std::string(std::strerror(errno)));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string why = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "was killed by signal " + std::to_string(WTERMSIG(status));
        // A spawned child that cannot exec exits 127 (posix_spawnp may report ENOENT that way).
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
            why += " (not installed? Debian: apt-get install gnuplot-nox)";
        throw std::runtime_error("gnuplot " + why + ": " + read_file(log));
    }
}

// gnuplot writes the image itself, by name: the temporary file of `image`, from gnuplot's
// working folder (hence absolute).
std::string gnuplot_output(OutputFile &image) {
    image.close_stream();
    return std::filesystem::absolute(image.write_path()).string();
}

// Puts the image gnuplot wrote in place, unless it is empty or the run was interrupted.
void finish_image(OutputFile &image) {
    std::error_code ec;
    const std::string written = image.write_path();
    if (!std::filesystem::exists(written, ec) || std::filesystem::file_size(written, ec) == 0)
        throw std::runtime_error("gnuplot finished but wrote nothing to '" + image.path() + "'");
    throw_if_interrupted();
    image.commit();
}

} // namespace

std::vector<PlotSeries> bandwidth_series(const Report &report) {
    std::vector<PlotSeries> series;
    std::map<std::string, std::size_t> index;
    for (const WorkflowResult &r : report.results) {
        if (r.workflow != "bandwidth") continue;
        for (const Figure &f : r.figures) {
            if (f.unit != "GB/s" || !f.stats || f.bytes == 0) continue;
            // The raw call's line is drawn thin and dotted in its backend's colour, beside xfer's:
            // where they part is where xfer adds or saves time.
            const bool raw = f.name.rfind("raw ", 0) == 0;
            const std::string direction = raw ? f.name.substr(4) : f.name;
            const std::string title = r.backend + " " + f.name;
            auto [it, inserted] = index.emplace(title, series.size());
            if (inserted) series.push_back(PlotSeries{title, r.backend, direction, {}, raw});
            series[it->second].points.push_back(PlotPoint{f.bytes, f.stats->median, f.stats->min, f.stats->max});
        }
    }
    return series;
}

std::string plot_format(const std::string &output) {
    std::string ext = std::filesystem::path(output).extension().string();
    for (char &c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".png") return "png";
    if (ext == ".svg") return "svg";
    throw std::invalid_argument("plot output '" + output + "' must end in .png or .svg");
}

std::string gnuplot_data(const std::vector<PlotSeries> &series) {
    std::ostringstream out;
    out.precision(9);
    for (const PlotSeries &s : series) {
        out << "# " << s.title << "\n# bytes median_GBps min_GBps max_GBps\n";
        for (const PlotPoint &p : s.points) out << p.bytes << ' ' << p.median << ' ' << p.min << ' ' << p.max << '\n';
        out << "\n\n"; // two blank lines: the next gnuplot "index"
    }
    return out.str();
}

std::string plot_subtitle(const Report &report) {
    std::string text = "xfer-tool " + report.tool_version;
    if (!report.run.commit.empty() && report.run.commit != "unknown") text += " (" + report.run.commit + ")";
    std::set<std::string> devices;
    for (const WorkflowResult &r : report.results)
        if (r.device.kind != "host" && !r.device.name.empty())
            devices.insert(r.device.name + (r.device.pcie_link.empty() ? "" : " " + r.device.pcie_link));
    if (devices.empty())
        for (const WorkflowResult &r : report.results)
            if (!r.device.name.empty()) devices.insert(r.device.name);
    for (const std::string &d : devices) text += ", " + d;
    if (report.run.time.size() >= 10) text += ", " + report.run.time.substr(0, 10);
    if (!report.run.host.empty()) text += ", " + report.run.host;
    return text;
}

std::string gnuplot_script(const std::vector<PlotSeries> &series, const std::string &data_path,
                           const std::string &output, const std::string &format, const std::string &subtitle) {
    std::set<std::uint64_t> sizes;
    for (const PlotSeries &s : series)
        for (const PlotPoint &p : s.points) sizes.insert(p.bytes);
    std::ostringstream out;
    out << (format == "png" ? "set terminal pngcairo size 1200,750 enhanced font 'sans,10'\n"
                            : "set terminal svg size 1200,750 dynamic enhanced font 'sans,10'\n");
    out << "set output " << quoted(output) << "\n"
        << "set title "
        << double_quoted("Transfer bandwidth by size (line: median; bars: min to max; dotted: raw call)" +
                         (subtitle.empty() ? "" : "\n" + subtitle))
        << " noenhanced\n"
        << "set xlabel 'transfer size'\n"
        << "set ylabel 'bandwidth (GB/s = 10^9 bytes/s)' noenhanced\n"
        << "set logscale x 2\n"
        << "set grid\n"
        << "set key outside right top noenhanced\n"
        << "set yrange [0:*]\n";
    // Margins of half a step on the log axis, so the end sizes keep their tick labels.
    if (!sizes.empty())
        out << "set xrange [" << static_cast<double>(*sizes.begin()) / 1.5 << ':'
            << static_cast<double>(*sizes.rbegin()) * 1.5 << "]\n";
    out << "set xtics rotate by -45 (";
    bool first = true;
    for (std::uint64_t b : sizes) {
        out << (first ? "" : ", ") << quoted(format_size(b)) << ' ' << b;
        first = false;
    }
    out << ")\n";
    // Colour says the backend, dash and point the direction: twelve lines stay readable.
    static const char *const colours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d"};
    std::map<std::string, std::size_t> backend_index, direction_index;
    out << "plot ";
    for (std::size_t i = 0; i < series.size(); ++i) {
        const std::size_t b = backend_index.emplace(series[i].backend, backend_index.size()).first->second;
        const std::size_t d = direction_index.emplace(series[i].direction, direction_index.size()).first->second;
        out << (i ? ", \\\n     " : "") << quoted(data_path) << " index " << i;
        if (series[i].raw)
            out << " using 1:2 with linespoints linewidth 1 linecolor rgb " << quoted(colours[b % std::size(colours)])
                << " dashtype 3 pointtype " << (d + 1) << " pointsize 0.6";
        else
            out << " using 1:2:3:4 with yerrorlines linewidth 2 linecolor rgb "
                << quoted(colours[b % std::size(colours)]) << " dashtype " << (d + 1) << " pointtype " << (d + 5);
        out << " title " << quoted(series[i].title);
    }
    out << "\n";
    return out.str();
}

void plot_bandwidth(const Report &report, const std::string &output) {
    OutputFile image(output, "plot");
    plot_bandwidth(report, image);
}

void plot_bandwidth(const Report &report, OutputFile &image) {
    const std::string format = plot_format(image.path());
    const std::vector<PlotSeries> series = bandwidth_series(report);
    if (series.empty())
        throw std::runtime_error("the results hold no bandwidth figures to plot: write some with "
                                 "`xfer-tool run bandwidth --format json --output RESULTS.json`");
    TempDir dir;
    const auto data = dir.path / "bandwidth.dat";
    const auto script = dir.path / "bandwidth.gp";
    std::ofstream(data) << gnuplot_data(series);
    std::ofstream(script) << gnuplot_script(series, data.string(), gnuplot_output(image), format,
                                            plot_subtitle(report));
    run_gnuplot(script, dir.path / "gnuplot.log");
    finish_image(image);
}

namespace {

// The rows (tracks) and colours (categories) of a timeline, in first-seen order.
std::pair<std::vector<std::string>, std::vector<std::string>>
tracks_and_categories(const std::vector<TimelineBox> &boxes) {
    std::vector<std::string> tracks, categories;
    for (const TimelineBox &b : boxes) {
        if (std::find(tracks.begin(), tracks.end(), b.track) == tracks.end()) tracks.push_back(b.track);
        if (std::find(categories.begin(), categories.end(), b.category) == categories.end())
            categories.push_back(b.category);
    }
    return {tracks, categories};
}

} // namespace

std::vector<TimelineBox> timeline_boxes(const nlohmann::json &trace) {
    if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
        throw std::runtime_error("not a Chrome trace (no \"traceEvents\"): write one with --trace FILE");
    std::map<int, std::string> processes;
    std::map<std::pair<int, int>, std::string> threads;
    for (const nlohmann::json &e : trace["traceEvents"]) {
        if (e.value("ph", "") != "M" || !e.contains("args")) continue;
        const std::string name = e["args"].value("name", "");
        if (e.value("name", "") == "process_name")
            processes[e.value("pid", 0)] = name;
        else if (e.value("name", "") == "thread_name")
            threads[{e.value("pid", 0), e.value("tid", 0)}] = name;
    }
    std::vector<TimelineBox> boxes;
    double first = 0;
    for (const nlohmann::json &e : trace["traceEvents"]) {
        if (e.value("ph", "") != "X" || !e.contains("ts") || !e.contains("dur")) continue;
        const int pid = e.value("pid", 0), tid = e.value("tid", 0);
        std::string process = processes.count(pid) ? processes[pid] : "pid " + std::to_string(pid);
        // "xfer pinned (device 0)" -> "pinned"
        if (process.rfind("xfer ", 0) == 0)
            process =
                process.substr(5, process.find(" (") == std::string::npos ? std::string::npos : process.find(" (") - 5);
        const std::string thread = threads.count({pid, tid}) ? threads[{pid, tid}] : "tid " + std::to_string(tid);
        const double ts = e["ts"].get<double>() / 1e3, dur = e["dur"].get<double>() / 1e3;
        if (boxes.empty() || ts < first) first = ts;
        boxes.push_back({process + ": " + thread, e.value("cat", ""), ts, ts + dur});
    }
    if (boxes.empty())
        throw std::runtime_error("the trace holds no spans: write one with `xfer-tool run overlap --trace FILE`");
    for (TimelineBox &b : boxes) {
        b.start_ms -= first;
        b.end_ms -= first;
    }
    return boxes;
}

std::string overlap_script(const std::vector<TimelineBox> &boxes, const std::string &data_path,
                           const std::string &output, const std::string &format, const std::string &title) {
    const auto [tracks, categories] = tracks_and_categories(boxes);
    const int height = std::max(400, 120 + 40 * static_cast<int>(tracks.size()));
    std::ostringstream out;
    out << (format == "png" ? "set terminal pngcairo size 1400," + std::to_string(height) + " font 'sans,10'\n"
                            : "set terminal svg size 1400," + std::to_string(height) + " dynamic font 'sans,10'\n");
    out << "set output " << quoted(output) << "\n"
        << "set title " << double_quoted(title) << " noenhanced\n"
        << "set xlabel 'time (ms)'\n"
        << "set yrange [-0.7:" << tracks.size() - 0.3 << "]\n"
        << "set ytics (";
    for (std::size_t i = 0; i < tracks.size(); ++i) out << (i ? ", " : "") << xfer::tool::quoted(tracks[i]) << ' ' << i;
    out << ") noenhanced\nset grid xtics\nset key outside right top noenhanced\nset style fill solid 0.85 noborder\n";
    static const char *const colours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d"};
    out << "plot ";
    for (std::size_t c = 0; c < categories.size(); ++c)
        out << (c ? ", \\\n     " : "") << quoted(data_path) << " index " << c
            << " using (($1+$2)/2):3:(($2-$1)/2):(0.35) with boxxyerror linecolor rgb "
            << quoted(colours[c % std::size(colours)]) << " title "
            << quoted(categories[c].empty() ? "(none)" : categories[c]);
    out << "\n";
    return out.str();
}

void plot_overlap(const nlohmann::json &trace, const std::string &output) {
    OutputFile image(output, "plot");
    plot_overlap(trace, image);
}

void plot_overlap(const nlohmann::json &trace, OutputFile &image) {
    const std::string format = plot_format(image.path());
    const std::vector<TimelineBox> boxes = timeline_boxes(trace);
    const auto [tracks, categories] = tracks_and_categories(boxes);
    // One data block per category (its colour); y is the track's row.
    std::ostringstream data;
    data.precision(9);
    for (const std::string &c : categories) {
        data << "# " << c << "\n";
        for (const TimelineBox &b : boxes)
            if (b.category == c)
                data << b.start_ms << ' ' << b.end_ms << ' '
                     << (std::find(tracks.begin(), tracks.end(), b.track) - tracks.begin()) << '\n';
        data << "\n\n";
    }
    std::string title = "Timeline: one row per stream (copies, kernels, prefetches)";
    if (trace.contains("otherData") && trace["otherData"].is_object())
        title += "\n" + trace["otherData"].value("generator", std::string());
    TempDir dir;
    const auto data_file = dir.path / "overlap.dat";
    const auto script = dir.path / "overlap.gp";
    std::ofstream(data_file) << data.str();
    std::ofstream(script) << overlap_script(boxes, data_file.string(), gnuplot_output(image), format, title);
    run_gnuplot(script, dir.path / "gnuplot.log");
    finish_image(image);
}

} // namespace xfer::tool

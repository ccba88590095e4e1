#include "plot.hpp"

#include "units.hpp"

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

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace xfer_tool {
namespace {

// gnuplot single-quoted strings: a quote is written twice.
std::string quoted(const std::string &text)
{
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += '\'';
        out += c;
    }
    return out + "'";
}

std::string read_file(const std::filesystem::path &path)
{
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Removes the working folder however plot_bandwidth leaves.
struct TempDir {
    std::filesystem::path path;
    TempDir()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "xfer-tool-plot-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            throw std::runtime_error("cannot create a temporary folder for gnuplot: " + std::string(std::strerror(errno)));
        path = pattern;
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

void run_gnuplot(const std::filesystem::path &script, const std::filesystem::path &log)
{
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
        throw std::runtime_error("'" + program + "' was not found on PATH: install gnuplot (Debian: apt-get install "
                                 "gnuplot-nox) or set XFER_TOOL_GNUPLOT to its path");
    if (rc != 0)
        throw std::runtime_error("cannot start '" + program + "': " + std::strerror(rc));
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

} // namespace

std::vector<PlotSeries> bandwidth_series(const Report &report)
{
    std::vector<PlotSeries> series;
    std::map<std::string, std::size_t> index;
    for (const WorkflowResult &r : report.results) {
        if (r.workflow != "bandwidth")
            continue;
        for (const Figure &f : r.figures) {
            if (f.unit != "GB/s" || !f.stats || f.bytes == 0)
                continue;
            // The raw calls' lines would nearly retrace the xfer ones and double the lines
            // (25 on five backends); their comparison is the "xfer / raw" ratio in the reports.
            if (f.name.rfind("raw ", 0) == 0)
                continue;
            const std::string title = r.backend + " " + f.name;
            auto [it, inserted] = index.emplace(title, series.size());
            if (inserted)
                series.push_back(PlotSeries{title, r.backend, f.name, {}});
            series[it->second].points.push_back(PlotPoint{f.bytes, f.stats->median, f.stats->min, f.stats->max});
        }
    }
    return series;
}

std::string plot_format(const std::string &output)
{
    std::string ext = std::filesystem::path(output).extension().string();
    for (char &c : ext)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext == ".png")
        return "png";
    if (ext == ".svg")
        return "svg";
    throw std::invalid_argument("plot output '" + output + "' must end in .png or .svg");
}

std::string gnuplot_data(const std::vector<PlotSeries> &series)
{
    std::ostringstream out;
    out.precision(9);
    for (const PlotSeries &s : series) {
        out << "# " << s.title << "\n# bytes median_GBps min_GBps max_GBps\n";
        for (const PlotPoint &p : s.points)
            out << p.bytes << ' ' << p.median << ' ' << p.min << ' ' << p.max << '\n';
        out << "\n\n"; // two blank lines: the next gnuplot "index"
    }
    return out.str();
}

std::string gnuplot_script(const std::vector<PlotSeries> &series, const std::string &data_path,
                           const std::string &output, const std::string &format)
{
    std::set<std::uint64_t> sizes;
    for (const PlotSeries &s : series)
        for (const PlotPoint &p : s.points)
            sizes.insert(p.bytes);
    std::ostringstream out;
    out << (format == "png" ? "set terminal pngcairo size 1200,750 enhanced font 'sans,10'\n"
                            : "set terminal svg size 1200,750 dynamic enhanced font 'sans,10'\n");
    out << "set output " << quoted(output) << "\n"
        << "set title 'Transfer bandwidth by size (line: median; bars: min to max)'\n"
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
    out
        << "set xtics rotate by -45 (";
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
        out << (i ? ", \\\n     " : "") << quoted(data_path) << " index " << i
            << " using 1:2:3:4 with yerrorlines linewidth 2 linecolor rgb " << quoted(colours[b % std::size(colours)])
            << " dashtype " << (d + 1) << " pointtype " << (d + 5) << " title " << quoted(series[i].title);
    }
    out << "\n";
    return out.str();
}

void plot_bandwidth(const Report &report, const std::string &output)
{
    const std::string format = plot_format(output);
    const std::vector<PlotSeries> series = bandwidth_series(report);
    if (series.empty())
        throw std::runtime_error("the results hold no bandwidth figures to plot: write some with "
                                 "`xfer-tool run bandwidth --format json --output RESULTS.json`");
    TempDir dir;
    const auto data = dir.path / "bandwidth.dat";
    const auto script = dir.path / "bandwidth.gp";
    std::ofstream(data) << gnuplot_data(series);
    const std::string absolute_output = std::filesystem::absolute(output).string();
    std::ofstream(script) << gnuplot_script(series, data.string(), absolute_output, format);
    run_gnuplot(script, dir.path / "gnuplot.log");
    std::error_code ec;
    if (!std::filesystem::exists(absolute_output, ec) || std::filesystem::file_size(absolute_output, ec) == 0)
        throw std::runtime_error("gnuplot finished but wrote nothing to '" + output + "'");
}

} // namespace xfer_tool

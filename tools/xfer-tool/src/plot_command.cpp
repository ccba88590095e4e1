// `xfer-tool plot RESULTS.json -o FILE.png|.svg`.
#include "commands.hpp"
#include "plot.hpp"
#include "report/report.hpp"

#include <cstdio>
#include <fstream>

namespace xfer_tool {

int run_plot(const PlotOptions &options)
{
    try {
        std::ifstream in(options.input);
        if (!in)
            throw std::runtime_error("cannot read '" + options.input + "'");
        nlohmann::json json;
        try {
            in >> json;
        } catch (const nlohmann::json::exception &e) {
            throw std::runtime_error("'" + options.input + "' is not valid JSON: " + e.what());
        }
        Report report;
        try {
            report = report_from_json(json);
        } catch (const std::exception &e) {
            throw std::runtime_error("'" + options.input + "': " + e.what());
        }
        plot_bandwidth(report, options.output);
        return kExitOk;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: plot: %s\n", e.what());
        return kExitError;
    }
}

} // namespace xfer_tool

// SPDX-License-Identifier: Apache-2.0
// `xfer-tool plot RESULTS.json -o FILE.png|.svg`, `plot --kind overlap TRACE.json -o FILE.png`
// and `xfer-tool diff A.json B.json`: the commands that read files written by earlier runs.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "diff.hpp"
#include "plot.hpp"

namespace xfer::tool {

int run_plot(const PlotOptions &options) {
    try {
        if (options.kind == "overlap") {
            std::ifstream in(options.input);
            if (!in) throw std::runtime_error("cannot read '" + options.input + "'");
            nlohmann::json trace;
            try {
                in >> trace;
            } catch (const nlohmann::json::exception &e) {
                throw std::runtime_error("'" + options.input + "' is not valid JSON: " + e.what());
            }
            plot_overlap(trace, options.output);
            return kExitOk;
        }
        plot_bandwidth(read_report_file(options.input), options.output);
        return kExitOk;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: plot: %s\n", e.what());
        return kExitError;
    }
}

int run_diff(const DiffOptions &options) {
    try {
        const Report a = read_report_file(options.before);
        const Report b = read_report_file(options.after);
        write_diff(std::cout, a, b, options.before, options.after, options.all);
        return kExitOk;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: diff: %s\n", e.what());
        return kExitError;
    }
}

} // namespace xfer::tool

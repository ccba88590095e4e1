// SPDX-License-Identifier: Apache-2.0
// `xfer-tool plot RESULTS.json -o FILE.png|.svg`, `plot --kind overlap TRACE.json -o FILE.png`
// and `xfer-tool diff A.json B.json`: the commands that read files written by earlier runs.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "diff.hpp"
#include "interrupt.hpp"
#include "plot.hpp"

namespace xfer::tool {

int run_plot(const PlotOptions &options) {
    std::unique_ptr<OutputFile> image;
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
            image = std::make_unique<OutputFile>(options.output, "plot");
            plot_overlap(trace, *image);
            return kExitOk;
        }
        const Report report = read_report_file(options.input);
        image = std::make_unique<OutputFile>(options.output, "plot");
        plot_bandwidth(report, *image);
        return kExitOk;
    } catch (const Interrupted &i) {
        return report_interrupted(i.signal, {image.get()});
    } catch (const std::exception &e) {
        // Ctrl-C reaches gnuplot too, which then fails: the interrupt is what happened.
        if (const int signal = interrupt_signal()) return report_interrupted(signal, {image.get()});
        std::fprintf(stderr, "xfer-tool: plot: %s\n", e.what());
        return kExitError;
    }
}

int run_diff(const DiffOptions &options) {
    try {
        const Report a = read_report_file(options.before);
        const Report b = read_report_file(options.after);
        const int worse = write_diff(std::cout, a, b, options.before, options.after, options.all);
        return worse > 0 ? kExitRegressions : kExitOk;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: diff: %s\n", e.what());
        return kExitError;
    }
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// xfer-tool: runs the standard transfer workflows against the xfer backends and reports what
// each memory strategy costs on this machine. See `xfer-tool --help`.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster.hpp"
#include "cluster/survey.hpp"
#include "commands.hpp"
#include "interrupt.hpp"
#include "run_info.hpp"

int main(int argc, char **argv) {
    using namespace xfer::tool;
    try {
        Invocation inv = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
        inv.run.command_line = shell_command_line(std::vector<std::string>(argv, argv + argc));
        // The commands that run for long or write files stop cleanly on SIGINT / SIGTERM
        // (interrupt.hpp); list, diff and help keep the default and end at once.
        if (inv.command == Command::run || inv.command == Command::compare || inv.command == Command::bench ||
            inv.command == Command::plot)
            install_interrupt_handlers();
        switch (inv.command) {
        case Command::help:
            std::fputs(inv.help_text.c_str(), stdout);
            return kExitOk;
        case Command::version:
            std::printf("xfer-tool %s (libxfer %s)\n", XFER_TOOL_VERSION, library_version().c_str());
            return kExitOk;
        case Command::list:
            use_config_file(inv.config);
            return run_list();
        case Command::run: {
            // Under an MPI launcher every rank runs and rank 0 reports for all
            // (cluster/survey.hpp); a plain run never initialises MPI.
            const std::unique_ptr<Cluster> cluster = join_cluster();
            return cluster ? run_survey(inv.run, *cluster) : run_workflows(inv.run, false);
        }
        case Command::compare:
            return run_workflows(inv.run, true);
        case Command::plot:
            return run_plot(inv.plot);
        case Command::diff:
            return run_diff(inv.diff);
        case Command::bench:
            return run_bench_command(inv.bench_args, inv.run.command_line);
        case Command::calibrate:
            return run_calibrate_command(inv.bench_args);
        }
    } catch (const Interrupted &i) {
        // The commands report their files themselves; this is for an interrupt that escaped them.
        return report_interrupted(i.signal, {});
    } catch (const UsageError &e) {
        std::fprintf(stderr, "xfer-tool: error: %s\n", e.what());
        if (!e.hint().empty()) std::fprintf(stderr, "%s\n", e.hint().c_str());
        return kExitUsage;
    } catch (const std::exception &e) {
        // Nothing should reach here; if something does, say what instead of aborting.
        std::fprintf(stderr, "xfer-tool: internal error: %s\n", e.what());
        return kExitError;
    }
    return kExitError;
}

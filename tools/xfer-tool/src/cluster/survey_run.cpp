// SPDX-License-Identifier: Apache-2.0
// `xfer-tool run` as one rank of an MPI survey: the same workflows as a plain run
// (run_command.hpp), on this rank's own device, then every rank's results to rank 0, which
// writes the one report. Every rank reaches every collective whatever happened before it (a
// backend that would not open, an error, an interrupt), so no rank is left waiting.
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

#include "cluster/survey.hpp"
#include "commands.hpp"
#include "interrupt.hpp"
#include "messages.hpp"
#include "report/report.hpp"
#include "run_command.hpp"
#include "trace.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {
namespace {

// The backend xfer_open(NULL, ...) would open, found without opening it (opening a CUDA
// backend to learn its name would put a context of every rank on device 0): the configured
// `backend` (XFER_BACKEND or the file), else the first available in xfer_open's order (xfer.h).
std::string default_backend() {
    int params = 0;
    if (xfer_param_count(&params) == XFER_SUCCESS)
        for (int i = 0; i < params; ++i) {
            xfer_param_info p{};
            if (xfer_param_get_info(i, &p) == XFER_SUCCESS && std::string(p.section).empty() &&
                std::string(p.name) == "backend" && *p.value)
                return p.value;
        }
    int count = 0;
    if (xfer_backend_count(&count) != XFER_SUCCESS) return "";
    for (const char *name : {"pinned", "pageable", "managed", "zerocopy", "host"})
        for (int i = 0; i < count; ++i) {
            xfer_backend_info info{};
            if (xfer_backend_get_info(i, &info) == XFER_SUCCESS && info.available && std::string(info.name) == name)
                return name;
        }
    return "";
}

// This rank's device of `backend`: --device N or --device all as given (on every rank);
// otherwise the local rank modulo the backend's devices, so the ranks of a host spread over
// its GPUs, and device 0 of the emulated host backend. A backend that cannot tell gets the
// library's choice, whose opening then says what is wrong.
std::vector<int> rank_devices(const std::string &backend, const RunOptions &o, int local_rank) {
    if (o.all_devices || o.device >= 0) return devices_to_run(backend, o);
    const std::string name = backend.empty() ? default_backend() : backend;
    int count = 0;
    if (name.empty() || xfer_backend_count(&count) != XFER_SUCCESS) return {o.device};
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        if (xfer_backend_get_info(i, &info) != XFER_SUCCESS || name != info.name) continue;
        if (!info.available || info.device_count <= 0) return {o.device};
        if (info.device_kind == XFER_DEVICE_KIND_HOST) return {0};
        return {local_rank % info.device_count};
    }
    return {o.device};
}

// Rank 0's half: the one report from every rank's bytes; returns the exit status of the whole
// survey. `own_trace`: rank 0's trace file while it is uncommitted (else null), for the message
// when the survey stops.
int write_merged_report(const Report &own, int size, const std::vector<std::string> &wires, ReportStream &stream,
                        const OutputFile *own_trace, const RunOptions &o) {
    std::vector<RankReport> ranks;
    int interrupted = 0;
    for (std::size_t i = 0; i < wires.size(); ++i) {
        RankReport rank;
        try {
            rank = from_wire(wires[i]);
        } catch (const std::exception &e) {
            // The rank itself printed its other errors; this one only rank 0 can see.
            rank.info.rank = static_cast<int>(i);
            rank.info.error = e.what();
            std::fprintf(stderr, "%s: rank %zu: %s\n", message_prefix(), i, e.what());
        }
        if (rank.interrupted && !interrupted) {
            interrupted = rank.interrupted;
            if (i != 0) std::fprintf(stderr, "%s: rank %zu was interrupted\n", message_prefix(), i);
        }
        ranks.push_back(std::move(rank));
    }
    // A rank that stopped early leaves the survey incomplete: no report, as a plain run that
    // is interrupted leaves none.
    auto stop = [&](int signal) {
        return report_interrupted(signal, {stream.file(), own_trace},
                                  stream.on_stdout() ? "no report was written to stdout" : "");
    };
    if (interrupted) return stop(interrupted);
    const Report merged = merge_survey(own, size, ranks);
    int status = results_status(merged.results);
    for (const RankInfo &r : merged.survey->ranks)
        if (!r.error.empty() && status == kExitOk) status = kExitError;
    try {
        stream.begin(merged);
        for (const WorkflowResult &r : merged.results) stream.add(merged, r);
        stream.finish(merged);
        // The last point to stop at, as in a plain run: past it the file takes its place.
        if (stream.file() && interrupt_signal()) return stop(interrupt_signal());
        stream.commit();
        if (o.format != "table") {
            std::FILE *where = stream.on_stdout() ? stderr : stdout;
            std::fprintf(where, "%s\n", verdict_line(merged).c_str());
            std::fflush(where);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        return status == kExitOk ? kExitError : status;
    }
    return status;
}

} // namespace

int run_survey(const RunOptions &o, Cluster &cluster) {
    set_message_rank(cluster.rank());
    const bool root = cluster.rank() == 0;
    prepare_run(o);
    Report report = new_report(o);

    // Files are opened before anything is measured, on every rank; when one rank cannot open
    // its file no rank measures.
    std::unique_ptr<ReportStream> stream;
    std::unique_ptr<OutputFile> trace_file;
    const std::string trace_path = o.trace.empty() ? "" : rank_file_path(o.trace, cluster.rank());
    bool opened = true;
    try {
        if (root)
            stream = std::make_unique<ReportStream>(
                o.format, o.output, o.long_table ? TableStyle::long_form : TableStyle::compact, o.samples,
                o.csv_metadata ? CsvMetadata::comments : CsvMetadata::none);
        if (!trace_path.empty()) trace_file = Tracer::open_trace_file(trace_path);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        opened = false;
    }
    if (!cluster.all_ok(opened)) {
        if (opened && root)
            std::fprintf(stderr, "%s: a rank could not open its files: nothing was measured\n", message_prefix());
        return kExitError;
    }

    RankReport mine;
    mine.info.rank = cluster.rank();
    mine.info.local_rank = cluster.local_rank();
    mine.info.hostname = report.run.host;
    mine.info.cpu_model = report.run.cpu_model;
    mine.info.time = report.run.time;
    mine.tool_version = report.tool_version;
    mine.library_version = report.library_version;
    Tracer tracer;
    Tracer *trace = trace_file ? &tracer : nullptr;
    try {
        const RunPlan plan = plan_runs(
            o, false, [&](const std::string &backend) { return rank_devices(backend, o, cluster.local_rank()); });
        // Once for the launch: every rank chooses by the same rule (each result names its backend).
        if (root) announce_backend(o, false);
        // Only rank 0 may draw on a terminal; the others' stderr is for errors.
        Progress progress(root && !o.quiet && !o.log_copies && Progress::stderr_is_terminal());
        run_plan(plan, o, trace, progress, report, nullptr);
    } catch (const Interrupted &i) {
        mine.interrupted = i.signal;
        // Rank 0 says it once it knows what became of the report too.
        if (!root) report_interrupted(i.signal, {trace_file.get()});
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        mine.info.error = e.what();
    }
    // This rank's trace takes its place now, so that a failure to write it is part of what
    // rank 0 learns and decides the exit status of every rank.
    if (trace && !mine.interrupted) try {
            tracer.write(trace_file->stream(), trace_path);
            trace_file->commit();
        } catch (const std::exception &e) {
            std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
            if (mine.info.error.empty()) mine.info.error = e.what();
        }
    mine.results = std::move(report.results);
    report.results.clear();
    // A signal after the last measurement still stops the survey (rank 0 writes no report).
    if (!mine.interrupted && interrupt_signal()) {
        mine.interrupted = interrupt_signal();
        if (!root) report_interrupted(mine.interrupted, {});
    }

    const std::vector<std::string> wires = cluster.gather(to_wire(mine));
    int status = kExitOk;
    // Rank 0's trace is still a temporary file only when rank 0 itself was interrupted.
    if (root)
        status = write_merged_report(report, cluster.size(), wires, *stream,
                                     mine.interrupted ? trace_file.get() : nullptr, o);
    return cluster.broadcast(status);
}

} // namespace xfer::tool

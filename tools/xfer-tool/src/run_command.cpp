// SPDX-License-Identifier: Apache-2.0
// `xfer-tool run` and `xfer-tool compare`: every requested workflow on every requested
// backend, then the report (and trace). A failure in one workflow is reported and the others
// still run; the exit status says the worst that happened.
#include "run_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "backend_choice.hpp"
#include "commands.hpp"
#include "compare.hpp"
#include "copy_paths.hpp"
#include "interrupt.hpp"
#include "messages.hpp"
#include "report/report.hpp"
#include "run_info.hpp"
#include "trace.hpp"
#include "workflows/workflow.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {

std::string library_version() {
    int major = 0, minor = 0, patch = 0;
    if (xfer_get_version(&major, &minor, &patch) != XFER_SUCCESS) return "unknown";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void use_config_file(const std::string &path) {
    if (!path.empty()) setenv("XFER_CONFIG", path.c_str(), 1);
}

namespace {

void use_copy_log(bool log_copies) {
    if (!log_copies) return;
    // The library's own copy log (xfer.h: XFER_LOG=copies), so that its format is written in
    // one place. xfer_open reads both variables: set before any context opens. The option
    // promises stderr ("-"), so a log_file of the configuration file does not divert it.
    setenv("XFER_LOG", "copies", 1);
    setenv("XFER_LOG_FILE", "-", 1);
}

// The backends to run on: "" lets the library choose. `all` skips unavailable backends with
// a note (the user asked for what is there); a named backend that cannot open is an error.
// compare without --backend leaves the emulated host backend out when a real device is
// there: its figures are no advice for that machine and it took most of compare's time.
std::vector<std::string> backends_to_run(const RunOptions &o, bool compare) {
    if (!o.backends.empty()) return o.backends;
    if (!o.all_backends && !compare) return {""};
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    std::vector<std::string> names, host_names;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (!info.available)
            std::fprintf(stderr, "%s: skipping backend %s: unavailable: %s\n", message_prefix(), info.name,
                         info.reason);
        else if (info.device_kind == XFER_DEVICE_KIND_HOST && !o.all_backends)
            host_names.push_back(info.name);
        else
            names.push_back(info.name);
    }
    if (names.empty())
        names = host_names; // no real device: the emulated one is what there is
    else
        for (const std::string &h : host_names)
            std::fprintf(stderr,
                         "%s: compare: leaving out the emulated %s backend (a real device is present; "
                         "--backend all includes it)\n",
                         message_prefix(), h.c_str());
    if (names.empty())
        throw XferError(XFER_ERROR_BACKEND_UNAVAILABLE, "no backend is available (see 'xfer-tool list')");
    return names;
}

} // namespace

void announce_backend(const RunOptions &o, bool compare) {
    if (compare || o.all_backends || !o.backends.empty()) return;
    try {
        const BackendChoice choice = default_backend();
        // One that does not open says why when the run tries it (the library's message).
        if (choice.opens)
            std::fprintf(stderr, "%s: running on backend %s: %s\n", message_prefix(), choice.name.c_str(),
                         choice.reason.c_str());
    } catch (const XferError &) {
        // A configuration the library refuses: opening the backend reports it.
    }
}

// --device all: every device of the backend ("" = the library's choice, resolved by opening
// it once). Otherwise the one device the options name.
std::vector<int> devices_to_run(const std::string &backend, const RunOptions &o) {
    if (!o.all_devices) return {o.device};
    std::string name = backend;
    if (name.empty()) name = Context("", -1).backend();
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (name == info.name && info.available) {
            std::vector<int> devices;
            for (int d = 0; d < info.device_count; ++d) devices.push_back(d);
            return devices;
        }
    }
    return {0}; // not found or unavailable: opening device 0 reports why
}

namespace {

void report_problem(Progress &progress, const WorkflowResult &r) {
    if (r.verification.state != Verification::State::failed && r.error.empty()) return;
    progress.clear();
    if (r.verification.state == Verification::State::failed)
        std::fprintf(stderr, "%s: %s on %s: verification FAILED: %s\n", message_prefix(), r.workflow.c_str(),
                     r.backend.c_str(), r.verification.detail.c_str());
    if (!r.error.empty())
        std::fprintf(stderr, "%s: %s on %s: error: %s\n", message_prefix(), r.workflow.c_str(), r.backend.c_str(),
                     r.error.c_str());
}

void run_on_backend(const std::string &backend, int device, bool first_device, const RunOptions &o, Tracer *tracer,
                    Progress &progress, Report &report, const std::function<void(const WorkflowResult &)> &on_result) {
    // Each result is handed on as soon as it is done (the table and CSV stream it).
    auto done = [&](WorkflowResult &&r) {
        report.results.push_back(std::move(r));
        progress.clear();
        if (on_result) on_result(report.results.back());
    };
    std::unique_ptr<Testbed> testbed;
    std::string open_error;
    try {
        testbed = std::make_unique<Testbed>(backend, device, tracer);
    } catch (const std::exception &e) {
        open_error = e.what();
    }
    const std::string name = testbed ? testbed->backend() : backend.empty() ? "(default)" : backend;
    if (!testbed) {
        progress.clear();
        std::fprintf(stderr, "%s: backend %s: cannot be opened: %s\n", message_prefix(), name.c_str(),
                     open_error.c_str());
    }
    for (const std::string &wf_name : o.workflows) {
        throw_if_interrupted();
        const Workflow *wf = find_workflow(wf_name);
        if (!wf->in_all && !first_device) continue; // peer covers every device pair from the first device's run
        progress.begin_step(wf_name + " on " + name);
        WorkflowResult r;
        r.workflow = wf_name;
        r.backend = name;
        if (!testbed) {
            r.error = open_error; // said once above
            done(std::move(r));
            continue;
        }
        r.device = testbed->device();
        try {
            testbed->timeline().set_workflow(wf_name);
            testbed->timeline().reanchor(testbed->anchor_stream());
            // The context's statistics count from here: the paths of this workflow's copies only.
            reset_copy_paths(testbed->context());
            WorkflowRun run{*testbed, o, progress, r};
            wf->run(run);
        } catch (const std::exception &e) {
            // A call that failed because the process was told to stop is the interrupt's doing.
            throw_if_interrupted();
            r.error = e.what();
        }
        // Read after a failure too: the copies made before it did take their paths.
        try {
            add_copy_paths(r.paths, testbed->context());
        } catch (const std::exception &e) {
            if (r.error.empty()) r.error = e.what();
        }
        report_problem(progress, r);
        done(std::move(r));
    }
}

} // namespace

void prepare_run(const RunOptions &o) {
    use_config_file(o.config);
    use_copy_log(o.log_copies);
}

Report new_report(const RunOptions &o) {
    Report report;
    report.tool_version = XFER_TOOL_VERSION;
    report.library_version = library_version();
    report.run = collect_run_info(o);
    return report;
}

RunPlan plan_runs(const RunOptions &o, bool compare, const DeviceChoice &devices) {
    RunPlan plan;
    for (const std::string &backend : backends_to_run(o, compare)) {
        plan.runs.emplace_back(backend, devices(backend));
        plan.steps += plan.runs.back().second.size() * o.workflows.size();
    }
    return plan;
}

void run_plan(const RunPlan &plan, const RunOptions &o, Tracer *tracer, Progress &progress, Report &report,
              const std::function<void(const WorkflowResult &)> &on_result) {
    progress.set_total(static_cast<int>(plan.steps));
    // An interrupt unwinds from here; the progress line goes with `progress`.
    for (const auto &[backend, devices] : plan.runs)
        for (std::size_t i = 0; i < devices.size(); ++i)
            run_on_backend(backend, devices[i], i == 0, o, tracer, progress, report, on_result);
    progress.clear();
}

int results_status(const std::vector<WorkflowResult> &results) {
    int status = kExitOk;
    for (const WorkflowResult &r : results) {
        if (r.verification.state == Verification::State::failed)
            status = kExitVerificationFailed;
        else if (!r.error.empty() && status == kExitOk)
            status = kExitError;
    }
    return status;
}

int run_workflows(const RunOptions &o, bool compare) {
    prepare_run(o);
    Report report = new_report(o);
    Tracer tracer;
    Tracer *trace = o.trace.empty() ? nullptr : &tracer;
    // Output and trace files are opened before anything is measured: a bad path costs nothing.
    // Both are temporary files until the end; whatever stops the run before (an interrupt, an
    // error) removes them and leaves the files at those paths as they were.
    std::unique_ptr<ReportStream> stream;
    std::unique_ptr<OutputFile> trace_file;
    try {
        stream = std::make_unique<ReportStream>(o.format, o.output,
                                                o.long_table ? TableStyle::long_form : TableStyle::compact, o.samples,
                                                o.csv_metadata ? CsvMetadata::comments : CsvMetadata::none);
        if (trace) trace_file = Tracer::open_trace_file(o.trace);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        return kExitError;
    }
    auto interrupted = [&](const Interrupted &i) {
        std::cout.flush();
        return report_interrupted(i.signal, {stream->file(), trace_file.get()},
                                  stream->on_stdout() ? "the report on stdout is incomplete" : "");
    };
    try {
        const RunPlan plan =
            plan_runs(o, compare, [&](const std::string &backend) { return devices_to_run(backend, o); });
        announce_backend(o, compare);
        stream->begin(report);
        // The copy log shares stderr with the progress line, which would cut its lines apart.
        Progress progress(!o.quiet && !o.log_copies && Progress::stderr_is_terminal());
        run_plan(plan, o, trace, progress, report, [&](const WorkflowResult &r) { stream->add(report, r); });
    } catch (const Interrupted &i) {
        return interrupted(i);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        return kExitError;
    }
    if (compare) report.recommendations = recommend(report.results);

    const int status = results_status(report.results);
    try {
        stream->finish(report);
        if (trace) tracer.write(trace_file->stream(), o.trace);
        // The last point to stop at: past it, both files take their places together (a report
        // on stdout alone is complete by now).
        if (stream->file() || trace_file) throw_if_interrupted();
        stream->commit();
        if (trace) trace_file->commit();
        // The report went to a file in a machine format: stdout still gets the comparison.
        if (compare && o.format != "table" && !stream->on_stdout()) write_comparison(std::cout, report);
        // The verdict ends the table; beside a machine format it goes where it cannot corrupt it.
        if (o.format != "table") {
            std::FILE *where = stream->on_stdout() ? stderr : stdout;
            std::fprintf(where, "%s\n", verdict_line(report).c_str());
            std::fflush(where);
        }
    } catch (const Interrupted &i) {
        return interrupted(i);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", message_prefix(), e.what());
        return status == kExitOk ? kExitError : status;
    }
    return status;
}

} // namespace xfer::tool

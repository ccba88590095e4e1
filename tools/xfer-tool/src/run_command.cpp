// `xfer-tool run` and `xfer-tool compare`: every requested workflow on every requested
// backend, then the report (and trace). A failure in one workflow is reported and the others
// still run; the exit status says the worst that happened.
#include "commands.hpp"
#include "compare.hpp"
#include "report/report.hpp"
#include "trace.hpp"
#include "workflows/workflow.hpp"

#include <xfer/xfer.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace xfer_tool {

std::string library_version()
{
    int major = 0, minor = 0, patch = 0;
    if (xfer_get_version(&major, &minor, &patch) != XFER_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void use_config_file(const std::string &path)
{
    if (!path.empty())
        setenv("XFER_CONFIG", path.c_str(), 1);
}

namespace {

// The backends to run on: "" lets the library choose. `all` skips unavailable backends with
// a note (the user asked for what is there); a named backend that cannot open is an error.
std::vector<std::string> backends_to_run(const RunOptions &o, bool compare)
{
    if (!o.backends.empty())
        return o.backends;
    if (!o.all_backends && !compare)
        return {""};
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (info.available)
            names.push_back(info.name);
        else
            std::fprintf(stderr, "xfer-tool: skipping backend %s: unavailable: %s\n", info.name, info.reason);
    }
    if (names.empty())
        throw XferError(XFER_ERROR_BACKEND_UNAVAILABLE, "no backend is available (see 'xfer-tool list')");
    return names;
}

// --device all: every device of the backend ("" = the library's choice, resolved by opening
// it once). Otherwise the one device the options name.
std::vector<int> devices_to_run(const std::string &backend, const RunOptions &o)
{
    if (!o.all_devices)
        return {o.device};
    std::string name = backend;
    if (name.empty())
        name = Context("", -1).backend();
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (name == info.name && info.available) {
            std::vector<int> devices;
            for (int d = 0; d < info.device_count; ++d)
                devices.push_back(d);
            return devices;
        }
    }
    return {0}; // not found or unavailable: opening device 0 reports why
}

void report_problem(Progress &progress, const WorkflowResult &r)
{
    if (r.verification.state != Verification::State::failed && r.error.empty())
        return;
    progress.clear();
    if (r.verification.state == Verification::State::failed)
        std::fprintf(stderr, "xfer-tool: %s on %s: verification FAILED: %s\n", r.workflow.c_str(), r.backend.c_str(),
                     r.verification.detail.c_str());
    if (!r.error.empty())
        std::fprintf(stderr, "xfer-tool: %s on %s: error: %s\n", r.workflow.c_str(), r.backend.c_str(), r.error.c_str());
}

void run_on_backend(const std::string &backend, int device, bool first_device, const RunOptions &o, Tracer *tracer,
                    Progress &progress, std::vector<WorkflowResult> &results)
{
    std::unique_ptr<Session> session;
    std::string open_error;
    try {
        session = std::make_unique<Session>(backend, device, tracer);
    } catch (const std::exception &e) {
        open_error = e.what();
    }
    const std::string name = session ? session->backend() : backend.empty() ? "(default)" : backend;
    if (!session) {
        progress.clear();
        std::fprintf(stderr, "xfer-tool: backend %s: cannot be opened: %s\n", name.c_str(), open_error.c_str());
    }
    for (const std::string &wf_name : o.workflows) {
        const Workflow *wf = find_workflow(wf_name);
        if (!wf->in_all && !first_device)
            continue; // peer covers every device pair from the first device's run
        progress.begin_step(wf_name + " on " + name);
        WorkflowResult r;
        r.workflow = wf_name;
        r.backend = name;
        if (!session) {
            r.error = open_error; // said once above
            results.push_back(std::move(r));
            continue;
        }
        r.device = session->device();
        try {
            session->timeline().set_workflow(wf_name);
            session->timeline().reanchor(session->anchor_stream());
            WorkflowRun run{*session, o, progress, r};
            wf->run(run);
        } catch (const std::exception &e) {
            r.error = e.what();
        }
        report_problem(progress, r);
        results.push_back(std::move(r));
    }
}

} // namespace

int run_workflows(const RunOptions &o, bool compare)
{
    use_config_file(o.config);
    Report report;
    report.tool_version = XFER_TOOL_VERSION;
    report.library_version = library_version();
    Tracer tracer;
    Tracer *trace = o.trace.empty() ? nullptr : &tracer;
    try {
        const std::vector<std::string> backends = backends_to_run(o, compare);
        std::vector<std::pair<std::string, std::vector<int>>> runs;
        std::size_t steps = 0;
        for (const std::string &backend : backends) {
            runs.emplace_back(backend, devices_to_run(backend, o));
            steps += runs.back().second.size() * o.workflows.size();
        }
        Progress progress(!o.quiet && Progress::stderr_is_terminal());
        progress.set_total(static_cast<int>(steps));
        for (const auto &[backend, devices] : runs)
            for (std::size_t i = 0; i < devices.size(); ++i)
                run_on_backend(backend, devices[i], i == 0, o, trace, progress, report.results);
        progress.clear();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return kExitError;
    }
    if (compare)
        report.recommendations = recommend(report.results);

    int status = kExitOk;
    for (const WorkflowResult &r : report.results) {
        if (r.verification.state == Verification::State::failed)
            status = kExitVerificationFailed;
        else if (!r.error.empty() && status == kExitOk)
            status = kExitError;
    }
    try {
        write_report(report, o.format, o.output);
        // The report went to a file in a machine format: stdout still gets the comparison.
        if (compare && o.format != "table" && !o.output.empty())
            write_comparison(std::cout, report);
        if (trace)
            tracer.write(o.trace);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return status == kExitOk ? kExitError : status;
    }
    return status;
}

} // namespace xfer_tool

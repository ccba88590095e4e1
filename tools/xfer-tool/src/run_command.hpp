// SPDX-License-Identifier: Apache-2.0
// The pieces of `run` and `compare` (run_command.cpp) that the MPI survey
// (cluster/survey_run.cpp) runs on every rank: the report's metadata, which backends and
// devices to run on, running the workflows, and the exit status the results call for.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "progress.hpp"
#include "result.hpp"

namespace xfer::tool {

class Tracer;

// Hands the configuration file and the copy log to the library (environment variables it
// reads at the first xfer_open): call before anything opens a context.
void prepare_run(const RunOptions &o);

// A report with the run's metadata (versions, RunInfo) and no results yet.
Report new_report(const RunOptions &o);

// The devices to run `backend` on ("" = the library's choice of backend).
using DeviceChoice = std::function<std::vector<int>(const std::string &backend)>;
// --device all: every device of the backend; otherwise the one --device names (-1 = the
// library's choice).
std::vector<int> devices_to_run(const std::string &backend, const RunOptions &o);

// Every backend to run on with its devices, in order, and the steps (workflow runs) that makes.
struct RunPlan {
    std::vector<std::pair<std::string, std::vector<int>>> runs;
    std::size_t steps = 0;
};
// Throws XferError when no backend is available; prints a note on stderr for each backend
// `--backend all` (or compare) skips.
RunPlan plan_runs(const RunOptions &o, bool compare, const DeviceChoice &devices);

// Says on stderr, once, which backend the run opens and why, when neither --backend nor the
// [xfer-tool] section named one (run only): "xfer-tool: running on backend host: no GPU
// backend is available (...)". Nothing when that backend cannot open: opening it says why.
void announce_backend(const RunOptions &o, bool compare);

// Runs every workflow of `o` on every run of the plan. Each result is appended to
// report.results, then handed to on_result (null: nobody wants them one by one). A workflow
// that fails is recorded in its result and the others still run. Throws Interrupted.
void run_plan(const RunPlan &plan, const RunOptions &o, Tracer *tracer, Progress &progress, Report &report,
              const std::function<void(const WorkflowResult &)> &on_result);

// What the results call for: kExitVerificationFailed when one failed verification, else
// kExitError when one stopped on an error, else kExitOk.
int results_status(const std::vector<WorkflowResult> &results);

} // namespace xfer::tool

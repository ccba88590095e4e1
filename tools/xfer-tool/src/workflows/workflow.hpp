// SPDX-License-Identifier: Apache-2.0
// The workflow registry: each workflow runs against one Testbed and fills one WorkflowResult.
#pragma once

#include <string>
#include <vector>

#include "progress.hpp"
#include "result.hpp"
#include "run_options.hpp"
#include "testbed.hpp"

namespace xfer::tool {

struct WorkflowRun {
    Testbed &testbed;
    const RunOptions &options;
    Progress &progress;
    WorkflowResult &result; // backend, device and workflow name are filled in by the runner
};

struct Workflow {
    const char *name;
    const char *summary; // one line for --help
    void (*run)(WorkflowRun &run);
    // Part of `all` (and of compare's default). peer is not: it needs two devices of one backend,
    // which most machines lack, and it measures every device pair whatever --device says.
    bool in_all = true;
};

// All workflows in the order `run all` runs them.
const std::vector<Workflow> &all_workflows();
// nullptr when no workflow has that name.
const Workflow *find_workflow(const std::string &name);

void run_roundtrip(WorkflowRun &run);
void run_sync_async(WorkflowRun &run);
void run_bandwidth(WorkflowRun &run);
void run_vector_add(WorkflowRun &run);
void run_overlap(WorkflowRun &run);
void run_batching(WorkflowRun &run);
void run_access(WorkflowRun &run);
void run_peer(WorkflowRun &run);

} // namespace xfer::tool

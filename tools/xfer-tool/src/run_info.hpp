// SPDX-License-Identifier: Apache-2.0
// Run metadata for every report (time, host, command line, versions, CPU, NUMA, effective
// configuration), so two runs can be told apart and compared later (`xfer-tool diff`).
#pragma once

#include <string>
#include <vector>

#include "result.hpp"
#include "run_options.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {

// Everything but the per-device facts (those are in each result's DeviceSummary). Reads the
// library's effective configuration (xfer_param_get_info); a library that cannot tell leaves
// it out rather than failing the run.
RunInfo collect_run_info(const RunOptions &options);
// The same without the run options (a command with options of its own, bench, adds them).
RunInfo collect_machine_info(const std::string &command_line, std::uint64_t seed);

// argv joined with shell quoting where a word needs it: what to type to run it again.
std::string shell_command_line(const std::vector<std::string> &argv);

// xfer's git commit when CMake was configured ("unknown" outside a git checkout).
const char *build_commit();

// "default" | "file" | "environment".
const char *param_source_name(xfer_param_source source);

// "13.0" from cudaDriverGetVersion's 13000; "" for 0.
std::string cuda_version_text(int version);

// NUMA node of the page holding `p` (move_pages query), -1 when unknown.
int numa_node_of(const void *p);

// NUMA node of a PCI device from sysfs ("0000:1b:00.0"), -1 when unknown.
int pci_numa_node(const std::string &pci_bus_id);

} // namespace xfer::tool

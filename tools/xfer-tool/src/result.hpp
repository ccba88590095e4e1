// SPDX-License-Identifier: Apache-2.0
// What a workflow produces: the one model every report format (table, CSV, JSON) writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stats.hpp"
#include "verify.hpp"

namespace xfer::tool {

// One measured figure. Units: "ms", "us", "GB/s" (10^9 B/s), "x" (ratio), "%".
struct Figure {
    std::string name; // e.g. "h2d", "kernel", "pipelined"
    std::string unit;
    std::uint64_t bytes = 0;    // transfer size the figure belongs to (0: not a transfer figure)
    std::optional<Stats> stats; // empty: nothing to measure on this backend (note says why)
    std::string note;
};

struct Parameter {
    std::string name;
    std::string text;                   // as shown in tables ("256 MiB")
    std::optional<std::uint64_t> value; // as a number in JSON (268435456), when it is one
};

struct DeviceSummary {
    std::string name;
    std::string kind; // "host" | "cuda"
    int ordinal = 0;
    std::string pcie_link; // "Gen5 x16", "" when unknown
    std::string pci_bus_id;
    std::string driver_version;  // CUDA driver, "13.0"; "" when none (host)
    std::string runtime_version; // CUDA runtime, "13.0"; "" when none
    int numa_node = -1;          // the device's NUMA node (sysfs), -1 when unknown
    int buffer_numa_node = -1;   // where the backend's host memory landed (move_pages), -1 when unknown
};

// How the bytes of one path moved, as xfer_context_get_stats counts them (xfer.h, "which path
// each copy took").
struct PathUse {
    std::string path;         // xfer_copy_path_name: "pinned_dma", "staged", "host_memcpy", ...
    std::uint64_t copies = 0; // copies, batch entries and pieces
    std::uint64_t bytes = 0;
    std::uint64_t host_ns = 0; // host time inside the calls that queued them
};

// Every copy a workflow made on its backend, by path: the statistics of its context(s), reset
// before the workflow and read after it.
struct PathBreakdown {
    bool measured = false;           // false: no statistics (the backend did not open)
    std::vector<PathUse> paths;      // the paths that moved something, most bytes first
    std::uint64_t slow_copies = 0;   // pieces that took a slow path (xfer_path_is_slow)
    std::uint64_t registrations = 0; // ranges page-locked (xfer_register, the registration cache)

    void add(const PathUse &use); // sums into the entry of use.path, keeping most bytes first
    std::uint64_t copies() const;
    std::uint64_t bytes() const;
};

// cluster/survey_wire.cpp carries every field of a result (and of the structs above that it
// holds) from rank to rank: a field added goes there too, or an MPI survey's report loses it.
struct WorkflowResult {
    std::string workflow;
    std::string backend;
    DeviceSummary device;
    std::vector<Parameter> parameters;
    std::vector<Figure> figures;
    Verification verification;
    std::string error; // set when the workflow stopped on a failed call
    PathBreakdown paths;
    int rank = -1;        // the MPI rank that measured it; -1 outside a survey (no rank columns)
    std::string hostname; // that rank's host ("" outside a survey)

    bool ok() const { return error.empty() && verification.state == Verification::State::passed; }
};

// One line of `compare`'s advice.
struct Recommendation {
    std::string pattern; // "large one-off transfers", ...
    std::string backend; // "" when no backend produced the figure
    std::string basis;   // the figures the choice rests on
};

// One configuration value as the report records it.
struct ConfigValue {
    std::string section; // "" top level, a backend name, or "xfer-tool" for the run options
    std::string name;
    std::string value;
    std::string source; // "default" | "file" | "environment" | "command line" | "quick"
};

// What makes two runs comparable later: when, where, what, with which configuration.
struct RunInfo {
    std::string time;                // UTC, ISO 8601 ("2026-12-01T10:20:30Z")
    std::string host;                // host name
    std::string command_line;        // as typed, shell-quoted
    std::string commit;              // xfer's git commit at configure time ("unknown" outside a checkout)
    std::string cpu_model;           // /proc/cpuinfo "model name", "" when unknown
    int cpu_numa_node = -1;          // NUMA node of the CPU the tool started on, -1 when unknown
    std::string seed;                // a string: 64-bit seeds above 2^53 survive JSON tools
    std::vector<ConfigValue> config; // the library's effective parameters, then the run options
};

// One process of an MPI survey (`mpirun -np N xfer-tool run ...`, cluster/survey.hpp).
struct RankInfo {
    int rank = 0;
    int local_rank = 0; // among the ranks of its host
    std::string hostname;
    std::string cpu_model;
    std::string time;  // when it started measuring (UTC, ISO 8601)
    std::string error; // what stopped the rank before or between its workflows ("" none)
    int failed = 0;    // its results that failed a check (error or verification)
};

// One line of a survey's summary: a figure measured on several ranks, and the rank (with its
// host and device) furthest from the median on the slow side.
struct SurveyLine {
    std::string workflow, backend, figure, unit;
    std::uint64_t bytes = 0;
    bool higher_is_better = true; // GB/s: the slowest is the lowest; ms: the highest
    int results = 0;              // results with the figure: one per rank (per device with --device all)
    double median = 0.0;          // of those results' medians
    int slowest_rank = 0;
    std::string slowest_hostname;
    int slowest_device = 0;
    double slowest = 0.0;   // that rank's median
    double vs_median = 0.0; // slowest / median
};

struct Survey {
    int size = 0;                    // ranks in the launch
    std::vector<RankInfo> ranks;     // by rank
    std::vector<SurveyLine> summary; // per workflow and backend, in report order
    int hosts() const;               // distinct host names among the ranks
};

struct Report {
    std::string tool_version;
    std::string library_version;
    RunInfo run;
    std::vector<WorkflowResult> results;
    std::vector<Recommendation> recommendations; // compare only
    std::optional<Survey> survey;                // MPI survey only: every rank's results, merged on rank 0
};

} // namespace xfer::tool

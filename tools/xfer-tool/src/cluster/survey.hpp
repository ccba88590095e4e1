// SPDX-License-Identifier: Apache-2.0
// The MPI survey (`mpirun -np N xfer-tool run ...`): every rank runs the workflows on its own
// GPU (or `host`) at once, sends its results to rank 0, and rank 0 writes one report with the
// rank and host on every result, a table of the ranks, and per workflow the slowest rank
// against the median: the node with a slow PCIe link stands out. Nothing here calls MPI: the
// bytes travel through a Cluster (cluster.hpp).
#pragma once

#include <string>
#include <vector>

#include "cli.hpp"
#include "cluster/cluster.hpp"
#include "result.hpp"

namespace xfer::tool {

// What one rank sends to rank 0.
struct RankReport {
    RankInfo info;
    std::vector<WorkflowResult> results;
    std::string tool_version, library_version;
    int interrupted = 0; // the signal that stopped the rank (SIGINT, SIGTERM), 0 when none did
};

// The bytes of a rank's report and back (survey_wire.cpp: every field, NaN included, in CBOR).
// from_wire throws std::runtime_error for bytes that are not a rank report of this format.
std::string to_wire(const RankReport &report);
RankReport from_wire(const std::string &bytes);

// Rank 0: the ranks' reports as one. `base` gives the run's metadata (rank 0's); the results
// come grouped by workflow and backend in the order they first appear, the ranks in order
// within each group, every one tagged with its rank and host; report.survey lists the ranks
// and the summary (summarize_survey).
Report merge_survey(const Report &base, int size, const std::vector<RankReport> &ranks);

// Per workflow and backend, the figures that say how fast the link is, each at the largest
// size it was measured at: the rates (GB/s; the raw call's rates are left out, they measure
// the same link) or, for a workflow without rates, its longest time (ms: the figure with the
// highest median). For each, the median over the results of every rank, and the slowest
// result with its rank, host and device. Results without a number (n/a, failed) do not count.
std::vector<SurveyLine> summarize_survey(const std::vector<WorkflowResult> &results);

// `xfer-tool run` as one rank of a survey; returns the exit status, the same on every rank:
// non-zero when any rank failed. Files: the report (-o) on rank 0 only; --trace FILE on every
// rank, as FILE with ".rankN" before its extension (trace.json -> trace.rank1.json).
int run_survey(const RunOptions &options, Cluster &cluster);

// The trace file of `rank`: "trace.json" -> "trace.rank1.json", "trace" -> "trace.rank1".
std::string rank_file_path(const std::string &path, int rank);

} // namespace xfer::tool

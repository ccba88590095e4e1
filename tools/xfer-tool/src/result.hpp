// What a workflow produces: the one model every report format (table, CSV, JSON) writes.
#pragma once

#include "stats.hpp"
#include "verify.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xfer_tool {

// One measured figure. Units: "ms", "us", "GB/s" (10^9 B/s), "x" (ratio), "%".
struct Figure {
    std::string name;          // e.g. "h2d", "kernel", "pipelined"
    std::string unit;
    std::uint64_t bytes = 0;   // transfer size the figure belongs to (0: not a transfer figure)
    std::optional<Stats> stats;// empty: nothing to measure on this backend (note says why)
    std::string note;
};

struct Parameter {
    std::string name;
    std::string text;                   // as shown in tables ("256 MiB")
    std::optional<std::uint64_t> value; // as a number in JSON (268435456), when it is one
};

struct DeviceSummary {
    std::string name;
    std::string kind;       // "host" | "cuda"
    int ordinal = 0;
    std::string pcie_link;  // "Gen5 x16", "" when unknown
    std::string pci_bus_id;
};

struct WorkflowResult {
    std::string workflow;
    std::string backend;
    DeviceSummary device;
    std::vector<Parameter> parameters;
    std::vector<Figure> figures;
    Verification verification;
    std::string error; // set when the workflow stopped on a failed call

    bool ok() const { return error.empty() && verification.state == Verification::State::passed; }
};

// One line of `compare`'s advice.
struct Recommendation {
    std::string pattern;  // "large one-off transfers", ...
    std::string backend;  // "" when no backend produced the figure
    std::string basis;    // the figures the choice rests on
};

struct Report {
    std::string tool_version;
    std::string library_version;
    std::vector<WorkflowResult> results;
    std::vector<Recommendation> recommendations; // compare only
};

} // namespace xfer_tool

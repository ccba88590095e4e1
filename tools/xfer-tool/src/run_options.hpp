// SPDX-License-Identifier: Apache-2.0
// Options of `run` and `compare`, after parsing (cli.cpp documents each with its default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xfer::tool {

// Early stop of a measurement's timed repeats when --repeats is not given (time to first
// answer): after min_samples (quick_min_samples with --quick), once the repeats have run for
// `seconds` or their samples vary by less than `steady_spread` (stddev / mean).
struct AdaptiveRepeats {
    static constexpr int min_samples = 5;
    static constexpr int quick_min_samples = 3;
    static constexpr double seconds = 0.25;
    static constexpr double steady_spread = 0.01;
};

struct RunOptions {
    std::vector<std::string> workflows; // names from the registry, in registry order
    std::vector<std::string> backends;  // explicit names; empty: the library's choice
    bool all_backends = false;          // --backend all
    int device = -1;                    // -1: XFER_DEVICE / config file / 0
    bool all_devices = false;           // --device all: every device of each backend
    std::uint64_t size = 256ull << 20;  // roundtrip, sync-async, vector-add, overlap (total), access
    std::vector<std::uint64_t> sizes;   // bandwidth sweep
    int repeats = 20;                   // at most this many timed repeats (exactly, when fixed_repeats)
    bool fixed_repeats = false;         // --repeats given: no early stop (workflow_support.hpp)
    int warmup = 2;
    int batches = 8;                // overlap
    int streams = 3;                // overlap
    std::uint64_t copies = 4096;    // batching: number of small copies
    std::uint64_t copy_size = 4096; // batching: bytes per copy
    std::uint64_t stride = 32;      // access: elements between neighbouring threads' reads
    std::uint64_t seed = 0;         // random data
    std::string format = "table";   // table | csv | json
    std::string output;             // report file ("" = stdout)
    std::string trace;              // Chrome trace file ("" = none)
    std::string config;             // configuration file (also handed to the library)
    bool quiet = false;             // no progress indicator
    bool log_copies = false;        // --log-copies: the library's copy log on stderr
    bool quick = false;             // --quick: the small defaults of cli.cpp
    std::vector<std::string> directions = {"h2d", "d2h", "bidir"}; // bandwidth: --direction
    bool samples = false;                                          // JSON carries every figure's raw samples
    bool csv_metadata = false; // CSV: the run's metadata as '#' lines before the header (--csv-metadata)
    bool long_table = false;   // bandwidth as one row per figure (the old form)
    std::string command_line;  // as typed, for the report (set by main)

    bool has_direction(const std::string &d) const {
        for (const std::string &x : directions)
            if (x == d) return true;
        return false;
    }
};

} // namespace xfer::tool

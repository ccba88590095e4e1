// Options of `run` and `compare`, after parsing (cli.cpp documents each with its default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xfer_tool {

struct RunOptions {
    std::vector<std::string> workflows;   // names from the registry, in registry order
    std::vector<std::string> backends;    // explicit names; empty: the library's choice
    bool all_backends = false;            // --backend all
    int device = -1;                      // -1: XFER_DEVICE / config file / 0
    bool all_devices = false;             // --device all: every device of each backend
    std::uint64_t size = 256ull << 20;    // roundtrip, sync-async, vector-add, overlap (total), access
    std::vector<std::uint64_t> sizes;     // bandwidth sweep
    int repeats = 20;
    int warmup = 2;
    int batches = 8;                      // overlap
    int streams = 3;                      // overlap
    std::uint64_t copies = 4096;          // batching: number of small copies
    std::uint64_t copy_size = 4096;       // batching: bytes per copy
    std::uint64_t stride = 32;            // access: elements between neighbouring threads' reads
    std::uint64_t seed = 0;               // random data
    std::string format = "table";         // table | csv | json
    std::string output;                   // report file ("" = stdout)
    std::string trace;                    // Chrome trace file ("" = none)
    std::string config;                   // configuration file (also handed to the library)
    bool quiet = false;                   // no progress indicator
};

} // namespace xfer_tool

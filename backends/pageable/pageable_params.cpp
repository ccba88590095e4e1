// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <cstddef>
#include <thread>

#include "pageable_buffer.hpp"
#include "pageable_context.hpp"
#include "staging_plan.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pageable {

// Help texts that name constants of the staging plan are built from them.
static_assert(kMinDmaChunkBytes % 1024 == 0, "chunk_size's help names the smallest chunk in KiB");
constexpr auto kThreadsHelp = plugin::join(
    "worker threads of the staging engine, each copying pieces of chunks between the user's memory and the "
    "page-locked slots; 0 = one per hardware thread but one (left to the application), at most ",
    plugin::decimal<kMaxAutoThreads>().text);
constexpr auto kChunkHelp = plugin::join(
    "largest DMA chunk of a staged copy and bytes per staging slot (a copy is cut into about ",
    plugin::decimal<kTargetChunks>().text, " chunks of at least ", plugin::decimal<kMinDmaChunkBytes / 1024>().text,
    " KiB, each filled or drained by all the workers at once)");
constexpr auto kSlotsHelp = plugin::join(
    "page-locked staging slots of chunk_size bytes (the arena, allocated once, at the context's first staged copy; "
    "one copy takes at most half of it); 0 = one per worker, at least ",
    plugin::decimal<kMinAutoSlots>().text);
constexpr const char *kDemoteHelp =
    "true: a worker that filled its piece of a copy's head, remainder or tail chunk (smaller than the copy's other "
    "chunks), bound for the device, moves it out of its core's caches (cldemote; a no-op on CPUs without it and off "
    "x86-64), so that the DMA reading it right after does not fetch each line from that core (on the H200 a 64 MiB "
    "copy to the device gained 0.03-0.07x of pinned speed, 256 MiB 0.02-0.04x); false = never";

constexpr xfer_backend_param kParams[] = {
    {"staging", "string", "async",
     "how copies between pageable host memory and device memory of at least staged_min_bytes (to the device) "
     "or staged_min_bytes_to_host run: async = "
     "through the staging engine, the call returning at once and the stream waiting for the bytes (stream memory "
     "operations; the engine's threads make no CUDA call, so no CUDA call of another thread can hold it up); "
     "sync = the same, the call returning once the user's memory was read (to device) or written (to host); "
     "off = every copy goes straight to cudaMemcpyAsync"},
    {"staging_threads", "int", "0", kThreadsHelp.text},
    {"staging_slots", "int", "0", kSlotsHelp.text},
    {"chunk_size", "size", "8388608", kChunkHelp.text},
    {"staging_linger_us", "int", "10000",
     "microseconds idle workers of the engine keep watching for the next staged copy (spinning and calling "
     "sched_yield) before they sleep: a copy that comes meanwhile starts at once on them and its calling thread "
     "wakes no worker (on the H200 machine, waking 15 sleeping workers cost a copy's call and its first DMA tens "
     "of microseconds); 0 = every worker sleeps at once"},
    {"staging_linger_workers", "int", "2",
     "how many idle workers linger (staging_linger_us) while the others sleep at once, so that at most this many "
     "cores spin between copies; more start a copy sooner (all 15 on the H200 machine: the asynchronous call's host "
     "time 1.6-3.2% of the copy, against 1.7-4.8% with 2 and 1.6-6.4% with none), 0 = none"},
    {"staged_min_bytes", "size", "16777216",
     "copies to the device smaller than this go straight to cudaMemcpyAsync (the driver's own path is faster "
     "for them: on the H200 the driver moved 1 MiB at 13 GB/s and 4 MiB at 16, the engine at 6 and 13; at 16 MiB "
     "the engine was 1.2-1.6x faster); measure the crossover of a machine with `xfer-tool bench --targets "
     "'pageable-raw-*'`"},
    {"staged_min_bytes_to_host", "size", "4194304",
     "copies to the host smaller than this go straight to cudaMemcpyAsync (the driver's pageable path is slower "
     "to the host: on the H200 the engine was 1.2-1.7x faster at 4 MiB and returns at once where the driver's "
     "copy waits for the stream; at 1 MiB it won 1.4x in one run and lost 0.77x in another)"},
    {"staging_demote", "bool", "1", kDemoteHelp},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];
static_assert(plugin::declared_defaults_are_decimal(kParams), "param_u64 parses declared defaults as decimals");

namespace {

// The values of `staging`, in the order of Staging.
enum Staging : std::size_t { staging_sync, staging_async, staging_off };
constexpr const char *kStagingModes[] = {"sync", "async", "off"};

xfer_status read(const xfer_backend_param_value *values, std::size_t count, const char *name, std::uint64_t min,
                 std::uint64_t max, std::uint64_t *out) {
    return param_u64("pageable", kParams, kParamCount, values, count, name, min, max, out);
}

} // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    std::uint64_t threads = 0;
    std::uint64_t slots = 0;
    std::uint64_t chunk = 0;
    std::uint64_t linger_us = 0;
    std::uint64_t linger_workers = 0;
    std::uint64_t staged_min = 0;
    std::uint64_t staged_min_to_host = 0;
    std::uint64_t demote = 0;
    std::size_t staging = 0;
    if (auto st = param_choice("pageable", kParams, kParamCount, values, count, "staging", kStagingModes, &staging)) {
        return st;
    }
    if (auto st = read(values, count, "staging_threads", 0, 256, &threads)) return st;
    if (auto st = read(values, count, "staging_slots", 0, 4096, &slots)) return st;
    // A chunk of one page at least (smaller never pays for its hand-off), 1 GiB at most.
    if (auto st = read(values, count, "chunk_size", 4096, 1ull << 30, &chunk)) return st;
    // At most a second: longer only burns cores.
    if (auto st = read(values, count, "staging_linger_us", 0, 1000000, &linger_us)) return st;
    if (auto st = read(values, count, "staging_linger_workers", 0, 256, &linger_workers)) return st;
    if (auto st = read(values, count, "staged_min_bytes", 0, ~0ull, &staged_min)) return st;
    if (auto st = read(values, count, "staged_min_bytes_to_host", 0, ~0ull, &staged_min_to_host)) return st;
    // A bool: the core hands it over as 1 or 0 (true/false, yes/no, on/off in files and the environment).
    if (auto st = read(values, count, "staging_demote", 0, 1, &demote)) return st;
    if (threads == 0) {
        threads = auto_threads(std::thread::hardware_concurrency());
    }
    if (slots == 0) {
        slots = auto_slots(threads);
    }
    auto ctx = std::make_unique<PageableContext>();
    if (staging != staging_off) {
        EngineConfig config;
        config.asynchronous = staging == staging_async;
        config.threads = threads;
        config.slots = slots;
        config.chunk_bytes = chunk;
        config.linger = std::chrono::microseconds(linger_us);
        config.linger_workers = linger_workers;
        config.staged_min_bytes = staged_min;
        config.staged_min_bytes_to_host = staged_min_to_host;
        config.demote = demote != 0;
        // Nothing is allocated or started yet: that waits for the first staged copy.
        ctx->engine = std::make_unique<StagingEngine>(*ctx, config);
    }
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::pageable

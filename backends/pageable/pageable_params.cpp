// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
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
    plugin::decimal<kMaxAutoThreads>().text, " and at most host_threads");
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
    "x86-64), so that the DMA reading it right after does not fetch each line from that core; so do the workers "
    "with the user memory they read for a copy of a range being page-locked, which the next copies read by DMA; "
    "false = never";

constexpr xfer_backend_param kParams[] = {
    {"staging", "string", "async",
     "when the call of a staged copy returns: async = at once, the stream itself waiting for the staging engine's "
     "threads (stream memory operations; the threads make no CUDA call, so no CUDA call of another thread can hold "
     "them up); sync = once the user's memory was read (to the device) or written (to the host)"},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];

// The staging engine's sizes: derived (from the machine's cores, and the declared defaults,
// chosen by measurement: docs/performance.md); a user may still set them.
constexpr xfer_backend_param kDerived[] = {
    {"staging_threads", "int", "0", kThreadsHelp.text},
    {"staging_slots", "int", "0", kSlotsHelp.text},
    {"chunk_size", "size", "8388608", kChunkHelp.text},
    {"staging_linger_us", "int", "10000",
     "microseconds idle workers of the engine keep watching for the next staged copy (spinning and calling "
     "sched_yield) before they leave their host thread to the context's other work: a copy that comes meanwhile "
     "starts at once on them and its calling thread wakes no worker; 0 = every worker leaves at once"},
    {"staging_linger_workers", "int", "2",
     "how many idle workers linger (staging_linger_us) while the others leave at once, so that at most this many "
     "cores spin between copies; 0 = none"},
    {"staging_demote", "bool", "1", kDemoteHelp},
};
const std::size_t kDerivedCount = sizeof kDerived / sizeof kDerived[0];
static_assert(plugin::declared_defaults_are_decimal(kDerived), "param_u64 parses declared defaults as decimals");

namespace {

// The values of `staging`, in the order of Staging.
enum Staging : std::size_t { staging_sync, staging_async };
constexpr const char *kStagingModes[] = {"sync", "async"};

} // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    std::size_t staging = 0;
    if (auto st = param_choice("pageable", kParams, kParamCount, values, count, "staging", kStagingModes, &staging)) {
        return st;
    }
    std::size_t host_threads = 0;
    if (auto st = read_host_threads("pageable", values, count, &host_threads)) return st;
    auto ctx = std::make_unique<PageableContext>();
    // A derived value: the user's, else its declared default; noted for xfer_context_get_setting.
    const auto read = [&](const char *name, std::uint64_t min, std::uint64_t max, std::uint64_t *v) {
        xfer_status st = param_u64("pageable", kDerived, kDerivedCount, values, count, name, min, max, v);
        if (st == XFER_SUCCESS) ctx->derived_values[name] = DerivedValue{std::to_string(*v), false};
        return st;
    };
    std::uint64_t threads = 0, slots = 0, chunk = 0, linger_us = 0, linger_workers = 0, demote = 0;
    if (auto st = read("staging_threads", 0, 256, &threads)) return st;
    if (auto st = read("staging_slots", 0, 4096, &slots)) return st;
    // A chunk of one page at least (smaller never pays for its hand-off), 1 GiB at most.
    if (auto st = read("chunk_size", 4096, 1ull << 30, &chunk)) return st;
    // At most a second: longer only burns cores.
    if (auto st = read("staging_linger_us", 0, 1000000, &linger_us)) return st;
    if (auto st = read("staging_linger_workers", 0, 256, &linger_workers)) return st;
    // A bool: the core hands it over as 1 or 0 (true/false, yes/no, on/off in files and the environment).
    if (auto st = read("staging_demote", 0, 1, &demote)) return st;
    // "auto": from the machine, within host_threads (the one limit on the threads xfer starts).
    if (threads == 0)
        threads = std::min<std::uint64_t>(auto_threads(std::thread::hardware_concurrency()), host_threads);
    if (slots == 0) slots = auto_slots(threads);
    ctx->derived_values["staging_threads"].value = std::to_string(threads);
    ctx->derived_values["staging_slots"].value = std::to_string(slots);
    EngineConfig config;
    config.asynchronous = staging == staging_async;
    config.threads = threads;
    config.slots = slots;
    config.chunk_bytes = chunk;
    config.linger = std::chrono::microseconds(linger_us);
    config.linger_workers = linger_workers;
    config.demote = demote != 0;
    // Nothing is allocated or started yet: that waits for the first staged copy.
    ctx->engine = std::make_unique<StagingEngine>(*ctx, config);
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::pageable

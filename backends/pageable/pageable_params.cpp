// SPDX-License-Identifier: Apache-2.0
#include <cstddef>
#include <thread>

#include "pageable_buffer.hpp"
#include "pageable_context.hpp"
#include "staging_plan.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pageable {

// Help texts that name constants of the staging plan are built from them.
static_assert(kMinChunkBytes % 1024 == 0, "chunk_size's help names the smallest chunk in KiB");
constexpr auto kThreadsHelp = plugin::join(
    "worker threads of the staging engine, each owning whole chunks; 0 = one per hardware thread, at most ",
    plugin::decimal<kMaxAutoThreads>().text);
constexpr auto kChunkHelp = plugin::join(
    "bytes per staging slot and largest chunk of a staged copy (smaller copies are cut so that every worker "
    "gets a chunk of at least ",
    plugin::decimal<kMinChunkBytes / 1024>().text, " KiB)");

constexpr xfer_backend_param kParams[] = {
    {"staging", "string", "sync",
     "how copies between pageable host memory and device memory of at least staged_min_bytes run: sync = "
     "through the staging engine (worker threads copy chunks into page-locked slots while the copy engine moves "
     "others), the call returning once the bytes are in host memory (to host) or queued for DMA (to device); "
     "async = the same but the call returns at once and the stream waits at a gate (stream memory operations): "
     "do not combine with CUDA calls that wait for the whole device from other threads (first kernel launches "
     "under lazy module loading, cudaFree); off = every copy goes straight to cudaMemcpyAsync"},
    {"staging_threads", "int", "0", kThreadsHelp.text},
    {"staging_slots", "int", "0",
     "page-locked staging slots of chunk_size bytes each, shared out among the workers (allocated once, at the "
     "context's first staged copy); 0 = twice staging_threads, so each worker fills one slot while the copy "
     "engine reads another"},
    {"chunk_size", "size", "4194304", kChunkHelp.text},
    {"staged_min_bytes", "size", "16777216",
     "copies smaller than this go straight to cudaMemcpyAsync (the driver's own path is faster for them: on the "
     "H200 the driver moved 4 MiB at 13 GB/s, the engine at 8; at 16 MiB the engine was 1.9x faster); measure "
     "the crossover of a machine with `xfer-tool bench --targets 'pageable-raw-*'`"},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];
static_assert(plugin::declared_defaults_are_decimal(kParams), "param_u64 parses declared defaults as decimals");

namespace {

// The values of `staging`, in the order of Staging.
enum Staging : std::size_t { staging_sync, staging_async, staging_off };
constexpr const char *kStagingModes[] = {"sync", "async", "off"};

// The buffer strategy's facts (and so the table's capabilities) describe the declared default:
// only `async` returns before the bytes move; sync and off may wait on the host.
static_assert((kDefaultCompletion == plugin::Completion::queued) ==
                  plugin::same_text(plugin::declared_default(kParams, "staging"), kStagingModes[staging_async]),
              "kDefaultCompletion (pageable_buffer.hpp) must describe the declared default of staging");

xfer_status read(const xfer_backend_param_value *values, std::size_t count, const char *name, std::uint64_t min,
                 std::uint64_t max, std::uint64_t *out) {
    return param_u64("pageable", kParams, kParamCount, values, count, name, min, max, out);
}

} // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    std::uint64_t threads = 0;
    std::uint64_t slots = 0;
    std::uint64_t chunk = 0;
    std::uint64_t staged_min = 0;
    std::size_t staging = 0;
    if (auto st = param_choice("pageable", kParams, kParamCount, values, count, "staging", kStagingModes, &staging)) {
        return st;
    }
    if (auto st = read(values, count, "staging_threads", 0, 256, &threads)) return st;
    if (auto st = read(values, count, "staging_slots", 0, 4096, &slots)) return st;
    // A chunk of one page at least (smaller never pays for its hand-off), 1 GiB at most.
    if (auto st = read(values, count, "chunk_size", 4096, 1ull << 30, &chunk)) return st;
    if (auto st = read(values, count, "staged_min_bytes", 0, ~0ull, &staged_min)) return st;
    if (threads == 0) {
        threads = auto_threads(std::thread::hardware_concurrency());
    }
    if (slots == 0) {
        slots = auto_slots(threads);
    }
    if (slots < threads) {
        return fail(XFER_ERROR_CONFIG,
                    "pageable: staging_slots (%llu) must be at least staging_threads (%llu): "
                    "every worker needs a slot of its own",
                    static_cast<unsigned long long>(slots), static_cast<unsigned long long>(threads));
    }
    auto ctx = std::make_unique<PageableContext>();
    if (staging != staging_off) {
        EngineConfig config;
        config.asynchronous = staging == staging_async;
        config.threads = threads;
        config.slots = slots;
        config.chunk_bytes = chunk;
        config.staged_min_bytes = staged_min;
        // Nothing is allocated or started yet: that waits for the first staged copy.
        ctx->engine = std::make_unique<StagingEngine>(*ctx, config);
    }
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::pageable

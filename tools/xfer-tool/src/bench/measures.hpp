// SPDX-License-Identifier: Apache-2.0
// The measurements behind the bench's rows. Each fills a row's two figures, its ratio (unit,
// note, per-pair stats) and its verification; a failed call throws (the runner records it).
// Every side that moves bytes is verified once more, untimed, into a cleared destination.
#pragma once

#include <cstdint>
#include <string>

#include "bench/bench.hpp"
#include "bench/bench_env.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {

// xfer_copy_async of a buffer vs the raw copy between the same two views.
void measure_copy_vs_raw(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                         std::uint64_t bytes);
// xfer_copy_async on `backend` vs xfer_copy_async on `reference` (the same size and direction).
void measure_copy_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                             xfer_direction dir, std::uint64_t bytes);
// Host time of the xfer_copy_async call vs the copy's time until the stream has finished.
void measure_async_host_time(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                             std::uint64_t bytes);
// xfer_copy_async after the calling thread slept `gap_ms` (the sleep not timed) vs the same copy
// back to back: what a copy between other work of the program gets.
void measure_after_idle_gap(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                            std::uint64_t bytes, int gap_ms);
// xfer_copy_async of a buffer imported by another process (xfer-bench-import-peer) vs the
// exporter's own xfer_copy_async of its XFER_ALLOC_SHAREABLE buffer: one memory, two processes.
void measure_import_vs_exporter(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                                std::uint64_t bytes);
// User memory the three ways a program uses it (measure_user_memory.cpp), a fresh array each
// repeat: its first copy against the raw call on the same memory, or against `reference`'s
// buffer copy; one array copied `copies` times, the copies from `timed_from` on against as many
// buffer copies of `reference`; `count` pieces of `piece` bytes each against the raw call per piece.
void measure_user_one_off_vs_raw(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                                 std::uint64_t bytes);
void measure_user_one_off_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend,
                                     const std::string &reference, xfer_direction dir, std::uint64_t bytes);
void measure_user_reuse(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                        xfer_direction dir, std::uint64_t bytes, int copies, int timed_from);
void measure_user_small(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                        std::uint64_t piece, std::size_t count);
// xfer_copy_async after the calling thread read `evict_bytes` of other memory (other work of the
// program: the copy's source is no longer in the caches) vs the same copy back to back.
void measure_after_host_work(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                             std::uint64_t bytes, std::uint64_t evict_bytes);
// xfer_memcpy_async from std::malloc'd memory vs the raw copy from the buffer's host view
// (cudaHostAlloc on pinned).
void measure_user_memory(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes);
// xfer_copy_async(XFER_TO_HOST) of a managed buffer vs cudaMemPrefetchAsync to the host.
void measure_managed_to_host(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes);

// Host time per call of a small xfer_memcpy_async vs the raw call, in us: calls_per_batch
// calls, `batches` times per repeat, the stream synchronised between batches.
void measure_call_overhead(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                           std::size_t bytes);
// What a copy observer costs each copy: the same calls as measure_call_overhead with a no-op
// observer installed (xfer_set_copy_observer) vs without one, in us per copy.
void measure_observer_cost(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                           std::size_t bytes);

// xfer_memcpy_batch_async of `count` scattered pieces vs the raw loop of single copies
// (coalesced = false), or vs one raw copy of the same bytes (coalesced = true).
void measure_batch(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir, std::size_t count,
                   std::size_t piece, bool coalesced);

// The overlap workflow's speed-up on `backend` vs on `reference`.
void measure_overlap_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                                std::uint64_t bytes, int batches, int streams);
// The overlap workflow's pipelined time vs its ideal (efficiency = ideal / pipelined).
void measure_overlap_efficiency(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes,
                                int batches, int streams);

} // namespace xfer::tool

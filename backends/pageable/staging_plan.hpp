// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the staging engine: how many workers and slots a machine gets when the
// parameters say "auto" (0), and how a copy is cut into chunks. Pure, so it is unit-tested
// without a device.
#pragma once

#include <cstddef>

namespace xfer::cuda::pageable {

// [offset, offset + bytes) of a larger range.
struct Span {
    std::size_t offset = 0;
    std::size_t bytes = 0;
};

// staging_threads 0: one worker per hardware thread, at most kMaxAutoThreads. On the H200
// machine (16 cores) 12-16 workers reached the link's ~50 GB/s; fewer than ~10 did not
// (one worker's memcpy into page-locked memory runs at ~5-10 GB/s).
constexpr std::size_t kMaxAutoThreads = 16;
std::size_t auto_threads(std::size_t hardware_threads) noexcept;

// staging_slots 0: two slots per worker, so each worker fills one slot while the copy engine
// still reads the other (slots = workers measured 36-38 GB/s, 2x workers 49-51, on the H200).
std::size_t auto_slots(std::size_t threads) noexcept;

// How many chunks of `chunk` bytes cover `bytes` (the last may be shorter); 0 for bytes 0.
std::size_t chunk_count(std::size_t bytes, std::size_t chunk) noexcept;

// Chunk `index` of that cover.
Span nth_chunk(std::size_t bytes, std::size_t chunk, std::size_t index) noexcept;

} // namespace xfer::cuda::pageable

namespace xfer::cuda::pageable {

// A chunk is never smaller than this (below it, a worker's hand-off costs more than its copy).
constexpr std::size_t kMinChunkBytes = std::size_t{256} << 10;

// Cutting a worker's share in two (for the pipeline's sake) stops at this chunk size.
constexpr std::size_t kMinPipelinedChunkBytes = std::size_t{1} << 20;

// The chunk a staged copy of `bytes` uses with `threads` workers and slots of `slot_bytes`:
// enough chunks for every worker to have one (so a mid-sized copy is not left to one worker's
// memcpy), two where that leaves chunks of at least kMinPipelinedChunkBytes (so DMAs start
// while the workers still copy), never below kMinChunkBytes, never above a slot, rounded to
// whole pages.
std::size_t plan_chunk(std::size_t bytes, std::size_t threads, std::size_t slot_bytes) noexcept;

} // namespace xfer::cuda::pageable

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

// staging_threads 0: one worker per hardware thread but one (left to the application, whose
// thread queues the copy's operations while the workers already copy: with a worker on every
// core, a large copy to the device paid for the caller's lost time slices), all of them on
// machines of one or two, at most kMaxAutoThreads. One worker's memcpy into page-locked memory
// runs far below a PCIe Gen5 link's rate, so it takes most of a 16-core machine's cores to keep
// up with the link (measured: docs/performance.md, pageable copies).
constexpr std::size_t kMaxAutoThreads = 16;
std::size_t auto_threads(std::size_t hardware_threads) noexcept;

// staging_slots 0: one slot of chunk_size per worker, at least four: with the default 8 MiB
// chunks, 128 MiB of page-locked memory on a 16-core machine, room for two copies of eight
// chunks in flight each (every worker copies pieces of every slot, so slots need not follow the
// worker count).
constexpr std::size_t kMinAutoSlots = 4;
std::size_t auto_slots(std::size_t threads) noexcept;

// How many chunks of `chunk` bytes cover `bytes` (the last may be shorter); 0 for bytes 0.
std::size_t chunk_count(std::size_t bytes, std::size_t chunk) noexcept;

// Chunk `index` of that cover.
Span nth_chunk(std::size_t bytes, std::size_t chunk, std::size_t index) noexcept;

} // namespace xfer::cuda::pageable

namespace xfer::cuda::pageable {

// The staging arena is reserved in granules of this size: a slot is a run of whole granules.
constexpr std::size_t kArenaGranuleBytes = std::size_t{64} << 10;

// A staged copy is cut into about this many chunks' worth (plan_layout adds a short head and a
// halving tail: 11 DMA chunks at 64 MiB). Each chunk costs the calling thread two queued
// operations, so more chunks would lengthen the asynchronous call's host time, which stays a
// few percent of the copy (measured: docs/performance.md, pageable copies).
constexpr std::size_t kTargetChunks = 8;

// A DMA chunk is never smaller than this (unless the copy is), so that small staged copies do
// not pay one queued operation per few KiB.
constexpr std::size_t kMinDmaChunkBytes = std::size_t{512} << 10;

// A worker copies at least this much at once (below it, the hand-off costs more than the copy).
constexpr std::size_t kMinPieceBytes = std::size_t{128} << 10;

// The DMA chunk of a staged copy of `bytes` whose chunks are at most `max_chunk`: about
// kTargetChunks chunks, at least kMinDmaChunkBytes, whole pages, never above max_chunk.
std::size_t plan_chunk(std::size_t bytes, std::size_t max_chunk) noexcept;

// How a staged copy of `bytes` is cut, for copies of at least two chunks: a short head of
// `edge` bytes (chunk / kEdgeDivisor), the remainder that no whole chunk fills (if any), whole
// chunks, and a tail that halves down to the edge (chunk/2, chunk/4, ..., edge). The first DMA
// to the device waits only for the head to be filled; at the end of a copy to the host only
// small chunks are left to drain after the last DMA, each drained while the next (half as
// large) is moved. With equal chunks and the remainder last, the host drained a large chunk
// after the last DMA while the link sat idle, and the DMA of a chunk the workers had just
// written (the head, the remainder, the tail) ran well below the link's rate (measured:
// docs/performance.md, pageable copies).
// Bytes past the last whole page end the last chunk (where it fits), so the others stay
// page-aligned. Smaller copies: equal chunks, only the last may be shorter (edge 0).
constexpr std::size_t kEdgeDivisor = 8;
struct ChunkLayout {
    std::size_t bytes = 0;
    std::size_t chunk = 0;
    std::size_t edge = 0;      // the head's bytes; 0: equal chunks
    std::size_t remainder = 0; // after the head, before the whole chunks (0: none); whole pages where it can
    std::size_t whole = 0;     // chunks of `chunk` bytes
    std::size_t tail[4] = {};  // chunk/2 ... edge (tail_count of them)
    std::size_t tail_count = 0;
    std::size_t count = 0;
    Span span(std::size_t index) const noexcept;
};
ChunkLayout plan_layout(std::size_t bytes, std::size_t max_chunk) noexcept;

// What one worker copies at once of a chunk: the chunk shared out among the workers, at least
// kMinPieceBytes, whole pages.
std::size_t plan_piece(std::size_t chunk, std::size_t threads) noexcept;

// Whether the workers push the pieces of a chunk of `span_bytes`, bound for the device, out of
// their cores' caches once filled (cache_demote.hpp): the chunks smaller than the copy's own
// chunk `copy_chunk` (ChunkLayout::chunk), i.e. its head, remainder and tail, whose DMAs follow
// their fill at once (and the shorter last chunk of a copy under two chunks, and a whole copy
// under kMinDmaChunkBytes, when staged_min_bytes lets such copies be staged). Demoting them
// speeds up copies to the device of 64 and 256 MiB against no demotion. Not every chunk of
// copies under kTargetChunks x chunk_size as well: that helps a lone 16 MiB copy but slows the
// overlap workflow's copies in both directions at once (measured: docs/performance.md, pageable
// copies).
bool plan_demotes(std::size_t span_bytes, std::size_t copy_chunk) noexcept;

// Granules a slot of `chunk` bytes takes.
std::size_t granules_of(std::size_t bytes) noexcept;

// A copy keeps at most this many chunks in flight: the workers fill one while the copy engine
// moves others (the link is a little faster than the workers' copying, so two would nearly
// do); more would only keep other copies, queued behind it on other streams, out of the arena.
constexpr std::size_t kMaxSlotsPerCopy = 6;

// How many slots a copy of `chunks` chunks of `chunk` bytes reserves in an arena of
// `arena_granules`: one per chunk, at most kMaxSlotsPerCopy and half the arena (so a second
// copy on another stream finds room), at least one.
std::size_t plan_slots(std::size_t chunks, std::size_t chunk, std::size_t arena_granules) noexcept;

} // namespace xfer::cuda::pageable

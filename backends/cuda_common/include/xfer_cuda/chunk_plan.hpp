// How a staged pageable copy is cut up: into chunks (one staging slot each, pipelined with the
// copy engine) and each chunk into pieces (one host thread each). Pure arithmetic, so it is
// unit-tested without a device.
#pragma once

#include <cstddef>

namespace xfer::cuda {

// [offset, offset + bytes) of a larger range.
struct Span {
    std::size_t offset = 0;
    std::size_t bytes = 0;
};

// Copies smaller than this go straight to cudaMemcpyAsync. Each staged chunk costs fixed work
// that does not shrink with its size: waking the host threads (a few us each), an event wait,
// a cudaMemcpyAsync launch and an event record (several us together). At 1 MiB the pipeline
// (two 512 KiB chunks, ~10 us of DMA each at ~50 GB/s) is still ahead of the driver's own
// pageable path (~6.5 GB/s: ~160 us); well below it, the driver's path (which, for small
// copies, buffers the bytes and returns) costs less than our fixed work.
constexpr std::size_t k_min_staged_bytes = std::size_t{1} << 20;

// A host thread is given at least this much of a chunk: below it, waking the thread costs
// more than the copy it would do (memcpy runs at ~10 GB/s per thread: 256 KiB ~ 25 us).
constexpr std::size_t k_min_piece_bytes = std::size_t{256} << 10;

// Pieces start on cache-line boundaries, so two threads never write the same line.
constexpr std::size_t k_piece_alignment = 64;

// Chunks (except the last) are whole pages of the staging slot.
constexpr std::size_t k_chunk_alignment = 4096;

// True when a copy of `bytes` takes the staged path: staging is on (threads > 0) and the copy
// is at least k_min_staged_bytes.
bool should_stage(std::size_t bytes, std::size_t threads) noexcept;

// The chunk a staged copy of `bytes` uses: `chunk_size`, except that a copy smaller than two
// chunks is cut into two page-rounded halves, since a single chunk leaves nothing for the host
// to copy while the copy engine moves it. Never more than `chunk_size` (the slot size).
std::size_t plan_chunk_bytes(std::size_t bytes, std::size_t chunk_size) noexcept;

// The piece each host thread copies of a chunk of `bytes` when `threads` threads share it:
// at most `threads` pieces, every one but the last at least k_min_piece_bytes (a chunk
// smaller than two of those is one piece), cache-line rounded. Never 0.
std::size_t plan_piece_bytes(std::size_t bytes, std::size_t threads) noexcept;

// How many spans of `unit` bytes cover `bytes` (the last one may be shorter); 0 for bytes 0.
std::size_t span_count(std::size_t bytes, std::size_t unit) noexcept;

// Span `index` of that cover.
Span nth_span(std::size_t bytes, std::size_t unit, std::size_t index) noexcept;

}  // namespace xfer::cuda

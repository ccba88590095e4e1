// SPDX-License-Identifier: Apache-2.0
#include "staging_plan.hpp"

#include <algorithm>
#include <iterator>

namespace xfer::cuda::pageable {

std::size_t auto_threads(std::size_t hardware_threads) noexcept {
    const std::size_t spare = hardware_threads > 2 ? hardware_threads - 1 : hardware_threads;
    return std::clamp<std::size_t>(spare, 1, kMaxAutoThreads);
}

std::size_t auto_slots(std::size_t threads) noexcept { return std::max(threads, kMinAutoSlots); }

std::size_t chunk_count(std::size_t bytes, std::size_t chunk) noexcept {
    return chunk == 0 ? 0 : (bytes + chunk - 1) / chunk;
}

Span nth_chunk(std::size_t bytes, std::size_t chunk, std::size_t index) noexcept {
    const std::size_t offset = index * chunk;
    if (offset >= bytes) {
        return Span{bytes, 0};
    }
    return Span{offset, std::min(chunk, bytes - offset)};
}

} // namespace xfer::cuda::pageable

namespace xfer::cuda::pageable {
namespace {

constexpr std::size_t kPage = 4096;

std::size_t round_up(std::size_t n, std::size_t unit) noexcept { return (n + unit - 1) / unit * unit; }

} // namespace

std::size_t plan_chunk(std::size_t bytes, std::size_t max_chunk) noexcept {
    std::size_t chunk = std::max((bytes + kTargetChunks - 1) / kTargetChunks, kMinDmaChunkBytes);
    chunk = std::min(round_up(chunk, kPage), max_chunk);
    return std::max<std::size_t>(chunk, 1);
}

ChunkLayout plan_layout(std::size_t bytes, std::size_t max_chunk) noexcept {
    ChunkLayout l;
    l.bytes = bytes;
    l.chunk = plan_chunk(bytes, max_chunk);
    const std::size_t edge = round_up(l.chunk / kEdgeDivisor, kPage);
    if (bytes < 2 * l.chunk || edge == 0 || edge >= l.chunk) { // edge 0: a chunk under 4 bytes
        l.count = chunk_count(bytes, l.chunk);
        return l;
    }
    // The tail halves from chunk/2 down to the edge, in whole pages (with chunks of a few
    // pages it may add up to more than one chunk).
    std::size_t tail_bytes = 0;
    for (std::size_t part = l.chunk / 2; l.tail_count < std::size(l.tail); part /= 2) {
        const std::size_t t = std::max(round_up(part, kPage), edge);
        l.tail[l.tail_count++] = t;
        tail_bytes += t;
        if (t == edge) {
            break;
        }
    }
    if (bytes < edge + tail_bytes + l.chunk) { // no room for that tail and a whole chunk: one edge
        l.tail_count = 0;
        tail_bytes = edge;
        l.tail[l.tail_count++] = edge;
    }
    l.edge = edge;
    const std::size_t middle = bytes - edge - tail_bytes;
    l.whole = middle / l.chunk;
    l.remainder = middle % l.chunk;
    // Bytes past the last whole page go to the last chunk where they fit, so that every chunk
    // but the last starts and ends on a page (the DMAs and the workers' pieces stay aligned),
    // and a copy of 64 MiB + 1 byte has no chunk of one byte.
    const std::size_t odd = l.remainder % kPage;
    if (odd != 0 && l.tail[l.tail_count - 1] + odd <= l.chunk) {
        l.tail[l.tail_count - 1] += odd;
        l.remainder -= odd;
    }
    l.count = 1 + (l.remainder != 0 ? 1 : 0) + l.whole + l.tail_count;
    return l;
}

Span ChunkLayout::span(std::size_t index) const noexcept {
    if (edge == 0) {
        return nth_chunk(bytes, chunk, index);
    }
    if (index == 0) {
        return Span{0, edge};
    }
    std::size_t offset = edge;
    if (remainder != 0) {
        if (index == 1) {
            return Span{offset, remainder};
        }
        offset += remainder;
        --index;
    }
    if (index <= whole) {
        return Span{offset + (index - 1) * chunk, chunk};
    }
    offset += whole * chunk;
    for (std::size_t j = 0; j < tail_count; ++j) {
        if (index == whole + 1 + j) {
            return Span{offset, tail[j]};
        }
        offset += tail[j];
    }
    return Span{bytes, 0};
}

std::size_t plan_piece(std::size_t chunk, std::size_t threads) noexcept {
    const std::size_t share = (chunk + std::max<std::size_t>(threads, 1) - 1) / std::max<std::size_t>(threads, 1);
    return round_up(std::max(share, kMinPieceBytes), kPage);
}

bool plan_demotes(std::size_t span_bytes, std::size_t copy_chunk) noexcept { return span_bytes < copy_chunk; }

std::size_t granules_of(std::size_t bytes) noexcept {
    return std::max<std::size_t>(1, (bytes + kArenaGranuleBytes - 1) / kArenaGranuleBytes);
}

std::size_t plan_slots(std::size_t chunks, std::size_t chunk, std::size_t arena_granules) noexcept {
    const std::size_t per_slot = granules_of(chunk);
    const std::size_t share = std::max(per_slot, arena_granules / 2);
    return std::max<std::size_t>(1, std::min({chunks, kMaxSlotsPerCopy, share / per_slot}));
}

} // namespace xfer::cuda::pageable

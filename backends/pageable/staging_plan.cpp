// SPDX-License-Identifier: Apache-2.0
#include "staging_plan.hpp"

#include <algorithm>

namespace xfer::cuda::pageable {

std::size_t auto_threads(std::size_t hardware_threads) noexcept {
    return std::clamp<std::size_t>(hardware_threads, 1, kMaxAutoThreads);
}

std::size_t auto_slots(std::size_t threads) noexcept { return 2 * std::max<std::size_t>(threads, 1); }

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

std::size_t plan_chunk(std::size_t bytes, std::size_t threads, std::size_t slot_bytes) noexcept {
    constexpr std::size_t page = 4096;
    // Two chunks per worker's share, so the copy engine moves the workers' first chunks while
    // they copy their second: at 64 MiB (2 MiB chunks instead of 4) H2D went from 0.48x to
    // 0.60x pinned on the H200, medians of three alternating rounds; D2H stayed (0.61x). But
    // never below kMinPipelinedChunkBytes unless a worker's share is smaller: 512 KiB chunks
    // made 16 MiB slower (1.29x -> 1.08x the driver). Large copies get slot-sized chunks
    // (four per worker lost 5-25% at 256 MiB and 1 GiB: docs/performance.md).
    const std::size_t share = bytes / std::max<std::size_t>(threads, 1);
    std::size_t chunk = std::max(share / 2, std::min(share, kMinPipelinedChunkBytes));
    chunk = std::max(chunk, kMinChunkBytes);
    chunk = (chunk + page - 1) / page * page;
    return std::max<std::size_t>(std::min(chunk, slot_bytes), 1);
}

} // namespace xfer::cuda::pageable

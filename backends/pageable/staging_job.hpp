// SPDX-License-Identifier: Apache-2.0
// Private to the staging pipeline's files: one staged copy as the pipeline keeps it (its slots,
// the words it waits on and writes, its progress), and the small helpers the files share.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "staging_pipeline.hpp"
#include "staging_plan.hpp"

namespace xfer::cuda::pageable {

using Clock = std::chrono::steady_clock;

inline std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

inline void store_release(std::uint32_t *word, std::uint32_t value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

// Granule states.
constexpr unsigned char kFree = 0;
constexpr unsigned char kReserved = 1;
constexpr unsigned char kLost = 2; // a failed copy's slot: its words may still move; never reused

// Each granule has three words: host side, device side (of a slot starting there), ready.
constexpr std::size_t kWordsPerGranule = 3;

struct StagingPipeline::Job {
    struct Slot {
        std::size_t granule = 0; // first granule; its words are the slot's
        std::size_t granules = 0;
        unsigned char *memory = nullptr;
        FlagWord host;   // the host's side: chunk filled (to device) or drained (to host)
        FlagWord device; // the stream's side: chunk's DMA done
        std::uint32_t first_use = 0;
    };

    Way way = Way::to_device;
    unsigned char *device = nullptr;
    unsigned char *host = nullptr;
    std::size_t bytes = 0;
    ChunkLayout layout;
    std::size_t threads = 1; // the pipeline's workers: each chunk is shared out among them
    void *stream = nullptr;
    bool demote_source = false; // to the device: the user's lines read leave the workers' caches
    std::vector<Slot> slots;
    FlagWord ready; // to device: the stream reached the copy
    std::uint32_t ready_value = 0;
    std::unique_ptr<std::atomic<std::size_t>[]> remaining; // per chunk: pieces not yet copied
    std::atomic<bool> aborted{false};
    std::atomic<std::int64_t> progress{0};

    // Under the pipeline's mutex_:
    bool ready_seen = false;
    std::size_t next_chunk = 0;
    std::size_t next_piece = 0;
    std::size_t chunks_done = 0;
    bool host_done = false;
    bool finished = false;
    xfer_status error = XFER_SUCCESS;
    std::string message;

    std::size_t chunks() const noexcept { return layout.count; }
    Span span(std::size_t i) const noexcept { return layout.span(i); }
    std::size_t piece_of(std::size_t i) const noexcept { return plan_piece(span(i).bytes, threads); }
    std::size_t pieces_in(std::size_t i) const noexcept { return chunk_count(span(i).bytes, piece_of(i)); }
    const Slot &slot_of(std::size_t i) const noexcept { return slots[i % slots.size()]; }
    std::uint32_t use_of(std::size_t i) const noexcept {
        return slot_of(i).first_use + static_cast<std::uint32_t>(i / slots.size());
    }
    // The last use of slot j (chunks j, j + k, ...), which the words of a finished copy show.
    std::uint32_t last_use(std::size_t j) const noexcept {
        const std::size_t k = slots.size();
        const std::size_t uses = j < chunks() ? (chunks() - j + k - 1) / k : 0;
        return slots[j].first_use + static_cast<std::uint32_t>(uses) - 1;
    }
};

} // namespace xfer::cuda::pageable

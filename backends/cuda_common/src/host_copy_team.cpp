// SPDX-License-Identifier: Apache-2.0
#include "host_copy_team.hpp"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "dma_staging_copy.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xfer::cuda {
namespace {

void cpu_relax() noexcept {
#if defined(__x86_64__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

// Spins between looks at shared state: a few pauses at first (a block or a group is usually
// microseconds away), then yields so that an idle helper gives its core to whoever needs it.
class Backoff {
  public:
    void wait() noexcept {
        if (++spins_ < kPauses) {
            cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }
    void reset() noexcept { spins_ = 0; }

  private:
    static constexpr unsigned kPauses = 4096;
    unsigned spins_ = 0;
};

// Copies pieces [begin, end): gathered with streamed stores and a fence (the DMA reads them
// next), or scattered with memcpy.
void copy_range(const HostPiece *pieces, std::size_t begin, std::size_t end, unsigned char *slot,
                bool gather) noexcept {
    for (std::size_t k = begin; k < end; ++k) {
        const HostPiece &p = pieces[k];
        if (gather) {
            dma_staging_copy(slot + p.slot_offset, p.user, p.bytes);
        } else {
            std::memcpy(p.user, slot + p.slot_offset, p.bytes);
        }
    }
    if (gather) {
        dma_staging_fence(); // the streamed stores are visible before the copy counts as done
    }
}

} // namespace

// One copy: its pieces cut into blocks that threads claim in order.
struct Job {
    const HostPiece *pieces = nullptr;
    unsigned char *slot = nullptr;
    bool gather = false;
    std::vector<std::size_t> block_ends; // block b is pieces [b ? block_ends[b - 1] : 0, block_ends[b])
    std::atomic<std::size_t> next{0};    // the next block to claim
    std::atomic<std::size_t> done{0};    // blocks copied

    // Claims and copies blocks until none is left.
    void work() noexcept {
        const std::size_t blocks = block_ends.size();
        for (std::size_t b = next.fetch_add(1, std::memory_order_relaxed); b < blocks;
             b = next.fetch_add(1, std::memory_order_relaxed)) {
            copy_range(pieces, b == 0 ? 0 : block_ends[b - 1], block_ends[b], slot, gather);
            done.fetch_add(1, std::memory_order_release);
        }
    }
};

struct HostCopyTeam::Shared {
    std::atomic<Job *> current{nullptr};
    std::atomic<bool> released{false};
    std::vector<std::unique_ptr<Job>> jobs; // the owner's; kept until the last helper lets go

    void help() noexcept {
        Job *seen = nullptr;
        Backoff backoff;
        for (;;) {
            Job *j = current.load(std::memory_order_acquire);
            if (j != nullptr && j != seen) {
                j->work();
                seen = j;
                backoff.reset();
                continue;
            }
            if (released.load(std::memory_order_acquire)) {
                return;
            }
            backoff.wait();
        }
    }
};

HostCopyTeam::HostCopyTeam(boost::asio::thread_pool *pool, std::size_t helpers) noexcept {
    try {
        shared_ = std::make_shared<Shared>();
    } catch (...) {
        return; // the owner copies alone
    }
    if (pool == nullptr) {
        return;
    }
    for (std::size_t i = 0; i < helpers; ++i) {
        try {
            boost::asio::post(*pool, [s = shared_] { s->help(); });
            ++helpers_;
        } catch (...) {
            break; // fewer helpers
        }
    }
}

HostCopyTeam::~HostCopyTeam() {
    if (shared_) {
        shared_->released.store(true, std::memory_order_release);
    }
}

void HostCopyTeam::copy(const HostPiece *pieces, std::size_t count, unsigned char *slot, bool gather) noexcept {
    Job *job = nullptr;
    if (shared_ && helpers_ > 0) {
        try {
            auto j = std::make_unique<Job>();
            std::size_t bytes = 0;
            for (std::size_t k = 0; k < count; ++k) {
                bytes += pieces[k].bytes;
                if (bytes >= kBlockBytes || k + 1 == count) {
                    j->block_ends.push_back(k + 1);
                    bytes = 0;
                }
            }
            shared_->jobs.push_back(std::move(j));
            job = shared_->jobs.back().get();
        } catch (...) {
            job = nullptr;
        }
    }
    if (job == nullptr) {
        copy_range(pieces, 0, count, slot, gather);
        return;
    }
    job->pieces = pieces;
    job->slot = slot;
    job->gather = gather;
    shared_->current.store(job, std::memory_order_release);
    job->work();
    // Blocks that helpers claimed may still be being copied.
    Backoff backoff;
    while (job->done.load(std::memory_order_acquire) < job->block_ends.size()) {
        backoff.wait();
    }
}

} // namespace xfer::cuda

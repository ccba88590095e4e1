// SPDX-License-Identifier: Apache-2.0
#include "host_copy_team.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "dma_staging_copy.hpp"
#include "host_pool.hpp"
#include "xfer_cuda/context.hpp"

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

// The owner's wait for blocks that helpers are still copying (microseconds: one block each):
// pauses at first, then yields its core.
class Backoff {
  public:
    void wait() noexcept {
        if (++spins_ < kPauses) {
            cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }

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
    // How long an idle helper spins for the next copy before it sleeps: longer than the owner's
    // work between two groups of a batch (building a group's descriptors), so that a batch's groups find their helpers awake; short beside the waits that
    // are not worth a core (a slot held by another stream, copies on the engine meanwhile).
    static constexpr std::chrono::microseconds kSpin{200};

    std::atomic<Job *> current{nullptr};
    std::atomic<bool> released{false};
    std::vector<std::unique_ptr<Job>> jobs; // the owner's; kept until the last helper lets go
    // Helpers past their spin wait here for a new copy or the release.
    std::mutex mutex;
    std::condition_variable news;
    std::atomic<unsigned> sleepers{0};

    bool new_copy(const Job *seen) const noexcept {
        const Job *j = current.load(); // (sequentially consistent: pairs with announce())
        return j != nullptr && j != seen;
    }

    // After the owner made a new copy current or released the team: wakes the helpers asleep
    // (none asleep: no system call). A helper counts itself asleep before its last look at
    // `current`, and both sides use sequentially consistent operations, so either that look
    // sees the change or this sees the helper.
    void announce() noexcept {
        if (sleepers.load() != 0) {
            try {
                std::lock_guard<std::mutex> lock(mutex); // a helper between its look and its wait
            } catch (...) {
                // (a mutex that cannot be locked: the sleeper's wait below is bounded)
            }
            news.notify_all();
        }
    }

    // Until a copy other than `seen` is current (true) or the team is released (false).
    bool wait_for_news(const Job *seen) noexcept {
        const auto until = std::chrono::steady_clock::now() + kSpin;
        for (unsigned spins = 0;; ++spins) {
            if (new_copy(seen)) {
                return true;
            }
            if (released.load()) {
                return false;
            }
            if (spins % 64 == 63 && std::chrono::steady_clock::now() >= until) {
                break;
            }
            cpu_relax();
        }
        try {
            std::unique_lock<std::mutex> lock(mutex);
            sleepers.fetch_add(1);
            // Bounded, so that a lost notification (none is expected) costs a millisecond at most.
            while (!new_copy(seen) && !released.load()) {
                news.wait_for(lock, std::chrono::milliseconds(1));
            }
            sleepers.fetch_sub(1);
        } catch (...) {
            while (!new_copy(seen) && !released.load()) {
                std::this_thread::yield(); // (no mutex: keep looking)
            }
        }
        return new_copy(seen);
    }

    void help() noexcept {
        const Job *seen = nullptr;
        while (wait_for_news(seen)) {
            Job *j = current.load(std::memory_order_acquire);
            j->work();
            seen = j;
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
        shared_->released.store(true);
        shared_->announce();
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
    shared_->current.store(job);
    shared_->announce();
    job->work();
    // Blocks that helpers claimed may still be being copied.
    Backoff backoff;
    while (job->done.load(std::memory_order_acquire) < job->block_ends.size()) {
        backoff.wait();
    }
}

} // namespace xfer::cuda

namespace xfer::cuda {

void copy_on_host_threads(const Context &ctx, void *dst, const void *src, std::size_t bytes) noexcept {
    // One block per piece: the team hands out whole pieces.
    const std::size_t block = HostCopyTeam::kBlockBytes;
    std::vector<HostPiece> pieces;
    try {
        pieces.reserve((bytes + block - 1) / block);
        for (std::size_t off = 0; off < bytes; off += block)
            pieces.push_back(HostPiece{static_cast<unsigned char *>(dst) + off, off, std::min(block, bytes - off)});
    } catch (const std::bad_alloc &) {
        std::memcpy(dst, src, bytes); // no room for the bookkeeping: this thread copies alone
        return;
    }
    // A helper per two blocks at most, and never more than the context lets xfer start.
    const std::size_t helpers = std::min(ctx.host_threads > 1 ? ctx.host_threads - 1 : 0, pieces.size() / 2);
    HostCopyTeam team(ctx.host_pool ? ctx.host_pool->get() : nullptr, helpers);
    team.copy(pieces.data(), pieces.size(), static_cast<unsigned char *>(const_cast<void *>(src)), false);
}

} // namespace xfer::cuda

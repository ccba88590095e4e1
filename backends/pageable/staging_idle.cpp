// SPDX-License-Identifier: Apache-2.0
// What an idle worker does, with no piece to claim:
//  - copies in flight: one worker polls their words for the stream's progress under the mutex,
//    so a chunk is claimed as soon as the stream frees it; the others watch the claim epoch
//    without the mutex (every worker polling under it slows the threads that queue copies) and
//    without a futex wake-up each (one poller waking the others through a condition variable
//    delays every chunk's fill; measured: docs/performance.md, pageable copies);
//  - nothing in flight, busy until lately: up to linger_workers of them linger for `linger`,
//    watching the epoch, so that the next copy starts at once on them and its calling thread
//    wakes no one (the lingering worker wakes the others);
//  - otherwise: the worker leaves its host thread, which goes back to the context's pool for
//    other work (a packed batch's helpers); the next copy posts it again.
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "staging_job.hpp"

namespace xfer::cuda::pageable {
namespace {

// An idle worker's wait between two looks at the words: spinning while a copy is moving (a DMA of
// a chunk takes ~100 us; a sleep costs ~60 us with Linux's default timer slack), short sleeps
// once nothing has moved for 2 ms (a copy queued behind a long kernel), longer after 50 ms.
void back_off(std::chrono::nanoseconds idle) noexcept {
    if (idle < std::chrono::milliseconds(2)) {
#if defined(__x86_64__) || defined(__i386__)
        for (int i = 0; i < 32; ++i) {
            _mm_pause();
        }
#endif
        std::this_thread::yield();
    } else if (idle < std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

} // namespace

bool StagingPipeline::idle_locked(std::unique_lock<std::mutex> &lock, Clock::time_point &idle_since) noexcept {
    if (jobs_.empty()) {
        if (Clock::now() - idle_since < config_.linger &&
            lingering_.load(std::memory_order_relaxed) < config_.linger_workers) {
            linger_locked(lock, idle_since);
            return true;
        }
        ++counters_.sleeps;
        --running_;
        finished_.notify_all();
        return false;
    }
    if (!polling_) {
        polling_ = true;
        reap_locked();
        lock.unlock();
        back_off(Clock::now() - idle_since);
        lock.lock();
        polling_ = false;
        return true;
    }
    const std::uint32_t seen = claim_epoch_.load(std::memory_order_acquire);
    lock.unlock();
    const auto since = Clock::now();
    while (claim_epoch_.load(std::memory_order_acquire) == seen &&
           Clock::now() - since < std::chrono::microseconds(200)) {
        back_off(Clock::now() - idle_since);
    }
    lock.lock();
    return true;
}

void StagingPipeline::linger_locked(std::unique_lock<std::mutex> &lock, Clock::time_point &idle_since) noexcept {
    // The next copy's submission bumps the epoch, watched without the mutex; the copy starts at
    // once, and the submitter leaves waking the workers that left to this one (see submit).
    lingering_.fetch_add(1, std::memory_order_relaxed); // under mutex_
    const std::uint32_t seen = claim_epoch_.load(std::memory_order_acquire);
    const auto until = idle_since + config_.linger;
    lock.unlock();
    while (claim_epoch_.load(std::memory_order_acquire) == seen && Clock::now() < until) {
        back_off(std::chrono::nanoseconds(0));
    }
    lock.lock();
    // Checked and counted down under the mutex: a submitter that saw this worker lingering
    // (and woke no one) published its copy before this check, so the copy is seen here.
    lingering_.fetch_sub(1, std::memory_order_relaxed);
    if (!jobs_.empty()) {
        ++counters_.linger_pickups;
        // Woken outside the mutex: posting and waking threads take tens of microseconds, and
        // the woken workers and the stream's progress need the mutex meanwhile.
        lock.unlock();
        wake();
        lock.lock();
    }
    if (claim_epoch_.load(std::memory_order_acquire) != seen) {
        idle_since = Clock::now(); // a copy came: its waits are watched at full rate
    }
}

} // namespace xfer::cuda::pageable

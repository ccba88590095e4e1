// SPDX-License-Identifier: Apache-2.0
// The workers: which piece of which copy a worker takes next, the copy of that piece between the
// user's memory and a slot, the flag that tells the stream, and a worker's loop (what it does
// while idle: staging_idle.cpp).
#include <cstring>

#include "cache_demote.hpp"
#include "staging_job.hpp"
#include "staging_nvtx.hpp"

namespace xfer::cuda::pageable {

bool StagingPipeline::chunk_eligible(Job &job, std::size_t i) noexcept {
    const Job::Slot &s = job.slot_of(i);
    const std::uint32_t u = job.use_of(i);
    if (job.way == Way::to_device) {
        if (!job.ready_seen) {
            if (!reached(job.ready.host, job.ready_value)) {
                return false;
            }
            job.ready_seen = true;
        }
        return reached(s.device.host, u - 1); // the slot's previous DMA has read it
    }
    return reached(s.device.host, u); // the chunk's DMA has landed in the slot
}

bool StagingPipeline::claim_locked(Claim *out) noexcept {
    // claimable_ holds the copies in the order they were submitted: the first eligible one of
    // next_way_'s direction, else the first eligible one of the other.
    auto pick = claimable_.end();
    for (auto it = claimable_.begin(); it != claimable_.end(); ++it) {
        if (!chunk_eligible(**it, (*it)->next_chunk)) {
            continue;
        }
        if ((*it)->way == next_way_) {
            pick = it;
            break;
        }
        if (pick == claimable_.end()) {
            pick = it;
        }
    }
    if (pick == claimable_.end()) {
        return false;
    }
    Job &j = **pick;
    next_way_ = j.way == Way::to_device ? Way::to_host : Way::to_device;
    out->job = *pick;
    out->chunk = j.next_chunk;
    out->piece = j.next_piece;
    if (++j.next_piece == j.pieces_in(j.next_chunk)) {
        j.next_piece = 0;
        ++j.next_chunk;
    }
    if (j.next_chunk == j.chunks()) {
        claimable_.erase(pick);
    }
    return true;
}

void StagingPipeline::run(const Claim &c) noexcept {
    Job &j = *c.job;
    const Span span = j.span(c.chunk);
    const Span piece = nth_chunk(span.bytes, j.piece_of(c.chunk), c.piece);
    unsigned char *slot = j.slot_of(c.chunk).memory + piece.offset;
    unsigned char *user = j.host + span.offset + piece.offset;
    if (!j.aborted.load(std::memory_order_acquire)) {
        const StagingPieceRange range(j.way == Way::to_device, piece.bytes);
        if (j.way == Way::to_device) {
            std::memcpy(slot, user, piece.bytes);
            if (config_.demote && plan_demotes(span.bytes, j.layout.chunk)) {
                demote_from_core_caches(slot, piece.bytes);
            }
            if (j.demote_source) {
                demote_from_core_caches(user, piece.bytes);
            }
        } else {
            std::memcpy(user, slot, piece.bytes);
        }
    }
    j.progress.store(now_ns(), std::memory_order_relaxed);
    if (j.remaining[c.chunk].fetch_sub(1, std::memory_order_acq_rel) != 1) {
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!j.aborted.load()) {
        // The chunk is in the slot (to device) or in the user's memory (to host): the stream
        // may read the slot, or fill it again.
        store_release(j.slot_of(c.chunk).host.host, j.use_of(c.chunk));
    }
    if (++j.chunks_done == j.chunks()) {
        host_side_done_locked(c.job);
    }
}

void StagingPipeline::host_side_done_locked(const std::shared_ptr<Job> &job) noexcept {
    job->host_done = true;
    if (job->way == Way::to_host && config_.host_writes_done) {
        config_.host_writes_done(job->stream);
    }
    if (job->aborted.load()) {
        open_waits_locked(*job);
    }
    // To the device, a copy's slots are free once its last DMA is done: reap_locked sees that.
    if (job->way == Way::to_host || job->aborted.load()) {
        release_locked(*job);
        job->finished = true;
        jobs_.remove(job);
    }
    finished_.notify_all();
}

void StagingPipeline::worker() noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    auto idle_since = Clock::now();
    while (!stopping_) {
        Claim c;
        if (claim_locked(&c)) {
            // The others may find the next piece: those watching the epoch come and look.
            claim_epoch_.fetch_add(1, std::memory_order_release);
            lock.unlock();
            run(c);
            c.job.reset();
            lock.lock();
            idle_since = Clock::now();
        } else if (!idle_locked(lock, idle_since)) {
            return; // left the host thread (running_ counted down): woken again by the next copy
        }
    }
    --running_;
    finished_.notify_all();
}

} // namespace xfer::cuda::pageable

// SPDX-License-Identifier: Apache-2.0
// A staged copy planned and queued: its chunks laid out (staging_plan.hpp), slots of the arena
// reserved, the copy published to the workers and everything queued on the user's stream at once.
#include <algorithm>
#include <new>

#include "staging_job.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda::pageable {

void StagingPipeline::reserve_slots_locked(Job &job, std::size_t want) noexcept {
    const std::size_t granules = granules_of(job.layout.chunk);
    for (std::size_t j = job.slots.size(); j < want; ++j) {
        std::size_t g = 0;
        if (!reserve_locked(granules, &g)) {
            return;
        }
        Job::Slot s;
        s.granule = g;
        s.granules = granules;
        s.memory = arena_ + g * kArenaGranuleBytes;
        s.host = words_[kWordsPerGranule * g];
        s.device = words_[kWordsPerGranule * g + 1];
        s.first_use = uses_[g] + 1;
        job.slots.push_back(s); // within the capacity submit reserved: no allocation
    }
}

bool StagingPipeline::reserve_locked(std::size_t granules, std::size_t *first) noexcept {
    std::size_t run = 0;
    for (std::size_t g = 0; g < granules_; ++g) {
        run = granule_state_[g] == kFree ? run + 1 : 0;
        if (run == granules) {
            *first = g + 1 - granules;
            std::fill_n(granule_state_.begin() + static_cast<std::ptrdiff_t>(*first), granules, kReserved);
            return true;
        }
    }
    return false;
}

void StagingPipeline::release_locked(const Job &job) noexcept {
    const unsigned char state = job.aborted.load() ? kLost : kFree;
    for (const Job::Slot &s : job.slots) {
        std::fill_n(granule_state_.begin() + static_cast<std::ptrdiff_t>(s.granule), s.granules, state);
    }
}

xfer_status StagingPipeline::enqueue(Job &job, std::string *why) noexcept {
    const std::size_t k = job.slots.size();
    // Flag operations are queued in batches (one call for a chunk's "DMA done" and the next
    // chunk's wait), a DMA by itself.
    FlagOp ops[8];
    std::size_t n = 0;
    auto flush = [&]() -> xfer_status {
        const xfer_status st = n == 0 ? XFER_SUCCESS : queue_.flags(job.stream, ops, n, why);
        n = 0;
        return st;
    };
    auto push = [&](const FlagOp &op) -> xfer_status {
        ops[n++] = op;
        return n == sizeof ops / sizeof ops[0] ? flush() : XFER_SUCCESS;
    };
    if (job.way == Way::to_device) {
        (void)push(FlagOp{FlagOp::write, job.ready, job.ready_value}); // the stream reached the copy
    }
    for (std::size_t i = 0; i < job.chunks(); ++i) {
        const Job::Slot &s = job.slot_of(i);
        const std::uint32_t u = job.use_of(i);
        const Span span = job.span(i);
        xfer_status st = XFER_SUCCESS;
        if (job.way == Way::to_device) {
            (void)push(FlagOp{FlagOp::wait, s.host, u}); // the workers filled the slot
            if ((st = flush()) == XFER_SUCCESS) {
                st = queue_.copy(job.stream, job.device + span.offset, s.memory, span.bytes, job.way, why);
            }
        } else {
            if (i >= k) {
                (void)push(FlagOp{FlagOp::wait, s.host, u - 1}); // the workers drained its last use
            }
            if ((st = flush()) == XFER_SUCCESS) {
                st = queue_.copy(job.stream, s.memory, job.device + span.offset, span.bytes, job.way, why);
            }
        }
        if (st != XFER_SUCCESS) {
            return st;
        }
        (void)push(FlagOp{FlagOp::write, s.device, u}); // the DMA is done (with a fence)
    }
    if (job.way == Way::to_host) {
        // Later work on the stream waits until every byte is in the user's memory.
        for (std::size_t j = 0; j < k; ++j) {
            if (auto st = push(FlagOp{FlagOp::wait, job.slots[j].host, job.last_use(j)})) {
                return st;
            }
        }
    }
    return flush();
}

xfer_status StagingPipeline::submit(void *device, void *host, std::size_t bytes, Way way, void *stream, bool wait_host,
                                    bool *taken, std::string *why, xfer_path_reason reason,
                                    bool demote_source) noexcept {
    *taken = false;
    if (bytes == 0 || granules_ == 0) {
        return XFER_SUCCESS;
    }
    std::shared_ptr<Job> job;
    // The job's list nodes are made before anything is queued, so that once the stream holds
    // the copy's waits, publishing it to the workers cannot fail.
    std::list<std::shared_ptr<Job>> claimable_node;
    std::list<std::shared_ptr<Job>> jobs_node;
    std::size_t want = 0; // slots
    try {
        job = std::make_shared<Job>();
        job->way = way;
        job->device = static_cast<unsigned char *>(device);
        job->host = static_cast<unsigned char *>(host);
        job->bytes = bytes;
        job->layout = plan_layout(bytes, config_.chunk_bytes);
        job->threads = config_.threads;
        job->stream = stream;
        job->demote_source = config_.demote && demote_source && way == Way::to_device;
        // A stream with nothing left to run has reached the copy already: the workers need not
        // wait for the stream to write the ready word (a few microseconds, more when the poller
        // sleeps). Asked before anything of this copy is queued.
        job->ready_seen = way == Way::to_device && queue_.idle(stream);
        job->remaining.reset(new std::atomic<std::size_t>[job->chunks()]);
        for (std::size_t i = 0; i < job->chunks(); ++i) {
            job->remaining[i].store(job->pieces_in(i), std::memory_order_relaxed);
        }
        want = plan_slots(job->chunks(), job->layout.chunk, granules_);
        job->slots.reserve(want);
        claimable_node.push_back(job);
        jobs_node.push_back(job);
    } catch (const std::bad_alloc &) {
        describe_into(why, [] { return std::string("staged copy: out of host memory for its bookkeeping"); });
        return XFER_ERROR_OUT_OF_MEMORY;
    }
    {
        // Room for at least two slots (one filled while the other's DMA runs) or all the copy
        // wants if less. Without it, wait while copies in flight finish, at most `stall`: a copy
        // that holds slots on a stream held by the caller's own later work would never finish,
        // and then this copy goes the direct way.
        std::unique_lock<std::mutex> lock(mutex_);
        const std::size_t enough = std::min<std::size_t>(want, 2);
        const auto deadline = Clock::now() + config_.stall;
        for (;;) {
            reap_locked();
            reserve_slots_locked(*job, want);
            if (job->slots.size() >= enough) {
                break;
            }
            if (jobs_.empty() || Clock::now() >= deadline) {
                if (job->slots.empty()) {
                    ++counters_.no_room;
                    return XFER_SUCCESS; // the caller copies the direct way
                }
                break; // one slot: slower, but staged
            }
            finished_.wait_until(lock, deadline);
        }
        // The path is taken once the copy is sure to be staged, before anything is published or
        // queued: a refusal gives the slots back (staged paths are never slow, but the policy
        // is the core's to decide).
        if (xfer_status st = plugin::take_path(wait_host ? XFER_PATH_STAGED_SYNC : XFER_PATH_STAGED,
                                               wait_host ? XFER_REASON_CONFIGURED : reason, bytes)) {
            release_locked(*job);
            return st;
        }
        const std::size_t g0 = job->slots.front().granule;
        job->ready = words_[kWordsPerGranule * g0 + 2];
        job->ready_value = ++readies_[g0];
        for (std::size_t j = 0; j < job->slots.size(); ++j) {
            uses_[job->slots[j].granule] = job->last_use(j);
        }
        // Published before its operations are queued, so that the workers fill the first
        // slots while this thread queues the rest: a chunk becomes eligible only through
        // flags the stream writes (or, on an idle stream, a slot's first fill, which reads
        // memory nothing on the stream still writes), and no DMA runs ahead of what was queued.
        job->progress.store(now_ns());
        claimable_.splice(claimable_.end(), claimable_node);
        jobs_.splice(jobs_.end(), jobs_node);
        ++counters_.staged;
        if (job->demote_source) ++counters_.source_demoted;
        // From here the pipeline owns the copy: it ends the host writes of a copy to the host
        // (host_writes_done) whatever happens, so the caller must not.
        *taken = true;
    }
    claim_epoch_.fetch_add(1, std::memory_order_release);
    // A lingering worker sees the epoch and wakes the workers that left itself (staging_idle.cpp):
    // the submitting thread then pays no wake-ups.
    if (lingering_.load(std::memory_order_acquire) == 0) {
        wake();
    }
    const xfer_status queued = enqueue(*job, why);
    if (queued == XFER_SUCCESS && !wait_host) {
        // Asynchronous and queued: nothing left that needs the mutex, which the workers just
        // woken are all taking to claim their first pieces.
        return XFER_SUCCESS;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (queued != XFER_SUCCESS) {
        // Given up like a copy whose stream failed: every wait already queued opens (the
        // stream runs on) and the slots are lost; this call returns once no worker touches
        // the user's memory any more, and reports the failure itself.
        abort_locked(job, queued, why->c_str(), false); // this call reports it
        finished_.wait(lock, [&] { return job->host_done; });
        return queued;
    }
    finished_.wait(lock, [&] { return job->host_done; });
    if (job->error != XFER_SUCCESS) {
        stream_errors_.erase(stream); // this call reports it
        describe_into(why, [&] { return job->message; });
        return job->error;
    }
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::pageable

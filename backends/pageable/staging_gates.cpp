// SPDX-License-Identifier: Apache-2.0
// The stream-order gates of staged copies: a copy's waits opened when it is given up, finished
// copies reaped (their slots free once their last DMA is done), copies given up after their
// stream or the device failed (abort, abandon), and the watchdog that asks a stalled copy's
// stream whether it failed.
#include <algorithm>

#include "staging_job.hpp"

namespace xfer::cuda::pageable {

// A given-up copy's waits all open, so the stream (if it still runs) is never held by it: only
// once no worker copies a piece of it any more (abort_locked, host_side_done_locked), so that
// no DMA the stream runs then reads or writes a slot a worker is still copying.
void StagingPipeline::open_waits_locked(const Job &j) noexcept {
    for (std::size_t s = 0; s < j.slots.size(); ++s) {
        store_release(j.slots[s].host.host, j.last_use(s) + 1);
    }
}

bool StagingPipeline::reap_locked() noexcept {
    bool any = false;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
        Job &j = **it;
        // Stream order: the last chunk's DMA done means every DMA of the copy is done.
        if (j.way == Way::to_device && j.host_done &&
            reached(j.slot_of(j.chunks() - 1).device.host, j.use_of(j.chunks() - 1))) {
            release_locked(j);
            j.finished = true;
            it = jobs_.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    if (any) {
        finished_.notify_all();
    }
    return any;
}

void StagingPipeline::abort_locked(const std::shared_ptr<Job> &job, xfer_status status, const char *message,
                                   bool report_on_stream) noexcept {
    Job &j = *job;
    if (j.finished || j.aborted.load()) {
        return;
    }
    j.aborted.store(true, std::memory_order_release);
    j.error = status;
    try {
        j.message = message;
        if (report_on_stream) {
            stream_errors_.emplace(j.stream, std::make_pair(status, j.message));
        }
    } catch (...) {
        // No memory to keep the message: the status still reaches a waiting caller.
    }
    ++counters_.given_up;
    if (j.host_done) {
        // To the device, waiting for its DMAs: nothing of the host's is left to do.
        open_waits_locked(j);
        release_locked(j);
        j.finished = true;
        jobs_.remove(job);
        finished_.notify_all();
        return;
    }
    claimable_.remove(job);
    // Pieces never claimed count as done; pieces being copied count when their worker ends.
    for (std::size_t i = j.next_chunk; i < j.chunks(); ++i) {
        const std::size_t unclaimed = i == j.next_chunk ? j.pieces_in(i) - j.next_piece : j.pieces_in(i);
        if (unclaimed != 0 && j.remaining[i].fetch_sub(unclaimed, std::memory_order_acq_rel) == unclaimed) {
            ++j.chunks_done;
        }
    }
    j.next_chunk = j.chunks();
    if (j.chunks_done == j.chunks()) {
        host_side_done_locked(job);
    }
}

void StagingPipeline::watchdog() noexcept {
    if (config_.watchdog_start) {
        config_.watchdog_start();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    const auto period = std::max<std::chrono::milliseconds>(config_.stall / 4, std::chrono::milliseconds(1));
    const auto stalled = [&](const Job &j, std::int64_t before) {
        return !j.aborted.load() && !j.finished && j.progress.load() < before;
    };
    while (!stopping_) {
        finished_.wait_for(lock, period);
        if (stopping_) {
            return;
        }
        reap_locked(); // a finished copy is never asked about: its stream may be gone
        const std::int64_t before = now_ns() - std::chrono::nanoseconds(config_.stall).count();
        if (std::none_of(jobs_.begin(), jobs_.end(), [&](const auto &j) { return stalled(*j, before); })) {
            continue;
        }
        // watch_mutex_ before mutex_ (forget_stream's order): a stream is not destroyed while
        // it is being asked about.
        lock.unlock();
        std::lock_guard<std::mutex> watching(watch_mutex_);
        lock.lock();
        for (;;) {
            reap_locked();
            auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const auto &j) { return stalled(*j, before); });
            if (it == jobs_.end()) {
                break;
            }
            const std::shared_ptr<Job> job = *it;
            job->progress.store(now_ns()); // asked once per stall period
            lock.unlock();
            // The only pipeline thread that calls into the device queue, with a query that does
            // not wait. If it blocks behind the runtime's lock, the workers go on without it.
            std::string why;
            const xfer_status health = queue_.health(job->stream, &why);
            lock.lock();
            reap_locked();
            if (health != XFER_SUCCESS && !job->finished) {
                std::string message;
                describe_into(&message, [&] {
                    return "staged copy of " + std::to_string(job->bytes) + " bytes " +
                           (job->way == Way::to_device ? "to the device" : "to the host") +
                           " given up: its stream failed: " + why;
                });
                abort_locked(job, health, message.c_str(), true);
            }
        }
    }
}

void StagingPipeline::abandon(void *stream, xfer_status status, const char *message) noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    reap_locked();
    const auto mine = [&](const Job &j) { return stream == nullptr || j.stream == stream; };
    for (;;) {
        auto it = std::find_if(jobs_.begin(), jobs_.end(),
                               [&](const auto &j) { return mine(*j) && !j->aborted.load() && !j->finished; });
        if (it == jobs_.end()) {
            break;
        }
        const std::shared_ptr<Job> job = *it;
        abort_locked(job, status, message, false); // the caller reports the failure
    }
    // Pieces being copied finish first: after this no worker touches those copies' memory.
    finished_.wait(lock, [&] {
        return std::none_of(jobs_.begin(), jobs_.end(), [&](const auto &j) { return mine(*j) && !j->host_done; });
    });
}

void StagingPipeline::forget_stream(void *stream) noexcept {
    std::lock_guard<std::mutex> watching(watch_mutex_);
    std::lock_guard<std::mutex> lock(mutex_);
    reap_locked();
    stream_errors_.erase(stream);
}

bool StagingPipeline::take_stream_error(void *stream, xfer_status *status, std::string *message) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = stream_errors_.find(stream);
    if (it == stream_errors_.end()) {
        return false;
    }
    *status = it->second.first;
    message->swap(it->second.second);
    stream_errors_.erase(it);
    return true;
}

} // namespace xfer::cuda::pageable

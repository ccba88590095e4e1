// SPDX-License-Identifier: Apache-2.0
// The staging pipeline's life: made, its workers started on the context's host threads, woken
// when copies come, and stopped once every copy is done. The other steps have files of their
// own: staging_submit.cpp (a copy planned and queued on its stream), staging_workers.cpp (the
// workers' claims and copies), staging_idle.cpp (what an idle worker does), staging_gates.cpp
// (the stream-order gates: reaping, giving up, the watchdog).
#include <thread>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "staging_job.hpp"

namespace xfer::cuda::pageable {

StagingPipeline::StagingPipeline(DeviceQueue &queue, const PipelineConfig &config, unsigned char *arena,
                                 std::vector<FlagWord> words)
    : queue_(queue), config_(config), arena_(arena), words_(std::move(words)),
      granules_(config.arena_bytes / kArenaGranuleBytes), granule_state_(granules_, kFree), uses_(granules_, 0),
      readies_(granules_, 0) {}

bool StagingPipeline::start() noexcept {
    try {
        if (!config_.run_on_host_thread) {
            // No pool handed over (the CUDA-free tests): the pipeline's own threads.
            own_pool_ = std::make_unique<boost::asio::thread_pool>(config_.threads);
        }
        watchdog_ = std::thread(&StagingPipeline::watchdog, this);
    } catch (...) {
        // A thread the system would not start (EAGAIN).
        close();
        return false;
    }
    if (wake() == 0) {
        // Not one worker could be started: nothing would ever copy.
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        return false;
    }
    return true;
}

bool StagingPipeline::post_worker() noexcept {
    try {
        if (own_pool_) {
            boost::asio::post(*own_pool_, [this] { worker(); });
            return true;
        }
        return config_.run_on_host_thread([this] { worker(); });
    } catch (...) {
        return false;
    }
}

std::size_t StagingPipeline::wake() noexcept {
    // Every worker that left runs again: counted before it is posted, so that two wakes never
    // run more than `threads` workers in all.
    std::size_t posting = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return 0;
        posting = config_.threads - running_;
        running_ = config_.threads;
    }
    std::size_t refused = 0;
    for (std::size_t i = 0; i < posting; ++i) refused += post_worker() ? 0 : 1;
    if (refused != 0) {
        // No host thread for them now: the workers running carry the copies on.
        std::lock_guard<std::mutex> lock(mutex_);
        running_ -= refused;
        finished_.notify_all();
    }
    return posting - refused;
}

StagingPipeline::~StagingPipeline() { close(); }

std::size_t StagingPipeline::flag_words_needed(std::size_t arena_bytes) noexcept {
    return kWordsPerGranule * (arena_bytes / kArenaGranuleBytes);
}

StagingPipeline::Counters StagingPipeline::counters() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
}

void StagingPipeline::close() noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!stopping_) {
        for (;;) {
            reap_locked();
            if (jobs_.empty()) {
                break;
            }
            finished_.wait_for(lock, std::chrono::microseconds(200));
        }
        stopping_ = true;
    }
    lock.unlock();
    claim_epoch_.fetch_add(1, std::memory_order_release); // lingering workers look again, and stop
    finished_.notify_all();
    // The workers leave their host threads once they see stopping_.
    lock.lock();
    finished_.wait(lock, [&] { return running_ == 0; });
    lock.unlock();
    if (own_pool_) own_pool_->join();
    if (watchdog_.joinable()) {
        watchdog_.join();
    }
}

} // namespace xfer::cuda::pageable

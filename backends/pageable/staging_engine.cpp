// SPDX-License-Identifier: Apache-2.0
#include "staging_engine.hpp"

#include <cstring>
#include <new>
#include <vector>

#include "staging_plan.hpp"

namespace xfer::cuda::pageable {

StagingEngine::StagingEngine(const Context &owner, const EngineConfig &config) noexcept
    : owner_(owner), host_writes_(owner.host_writes), config_(config) {}

StagingEngine::~StagingEngine() { (void)close(); }

void StagingEngine::release() noexcept {
    pipeline_.reset();
    if (arena_ != nullptr) (void)cudaFreeHost(arena_);
    if (words_ != nullptr) (void)cudaFreeHost(words_);
    arena_ = words_ = nullptr;
    (void)cudaGetLastError();
}

bool StagingEngine::start() noexcept {
    std::lock_guard<std::mutex> lock(start_mutex_);
    if (tried_) {
        return usable_;
    }
    // Tried once: page-locked memory the host cannot give now would be refused again, slowly,
    // on every copy; the direct path serves the context instead.
    tried_ = true;
    // The arena in whole granules; at least one slot.
    const std::size_t arena_bytes = granules_of(config_.slots * config_.chunk_bytes) * kArenaGranuleBytes;
    const std::size_t word_count = StagingPipeline::flag_words_needed(arena_bytes) + 1; // + the proof's
    void *device_words = nullptr;
    if (cudaHostAlloc(&words_, word_count * sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable) !=
            cudaSuccess ||
        cudaHostGetDevicePointer(&device_words, words_, 0) != cudaSuccess) {
        describe_into(&unusable_why_,
                      [] { return std::string("cudaHostAlloc(cudaHostAllocMapped) of the staging flags failed"); });
        release();
        return false;
    }
    std::memset(words_, 0, word_count * sizeof(std::uint32_t));
    std::vector<FlagWord> words;
    try {
        words.resize(word_count);
    } catch (const std::bad_alloc &) {
        describe_into(&unusable_why_, [] { return std::string("out of host memory for the staging flags"); });
        release();
        return false;
    }
    for (std::size_t i = 0; i < word_count; ++i) {
        words[i].host = static_cast<std::uint32_t *>(words_) + i;
        words[i].device = reinterpret_cast<std::uint64_t>(static_cast<std::uint32_t *>(device_words) + i);
    }
    const FlagWord probe = words.back();
    words.pop_back();
    if (!queue_.start(probe, &unusable_why_)) {
        release();
        return false;
    }
    if (cudaHostAlloc(&arena_, arena_bytes, cudaHostAllocDefault) != cudaSuccess) {
        describe_into(&unusable_why_, [&] {
            return "cudaHostAlloc(" + std::to_string(arena_bytes) + " bytes) of the staging arena failed";
        });
        arena_ = nullptr;
        release();
        return false;
    }
    PipelineConfig pc;
    pc.threads = config_.threads;
    pc.chunk_bytes = config_.chunk_bytes;
    pc.linger = config_.linger;
    pc.linger_workers = config_.linger_workers;
    pc.demote = config_.demote;
    pc.arena_bytes = arena_bytes;
    HostWriteTracker *tracker = &host_writes_;
    const int device = owner_.device;
    try {
        pc.host_writes_done = [tracker](void *stream) { tracker->end(static_cast<cudaStream_t>(stream)); };
        pc.watchdog_start = [device] { (void)cudaSetDevice(device); };
        // The workers run on the context's host threads, shared with its other host-side engines.
        const Context *owner = &owner_;
        pc.run_on_host_thread = [owner](std::function<void()> task) {
            return owner->run_on_host_thread(std::move(task));
        };
        pipeline_ =
            std::make_unique<StagingPipeline>(queue_, pc, static_cast<unsigned char *>(arena_), std::move(words));
    } catch (...) {
        describe_into(&unusable_why_, [] { return std::string("out of host memory for the staging pipeline"); });
        release();
        return false;
    }
    if (!pipeline_->start()) {
        describe_into(&unusable_why_, [] { return std::string("the staging threads could not be started"); });
        release();
        return false;
    }
    live_.store(pipeline_.get(), std::memory_order_release);
    usable_ = true;
    return true;
}

xfer_status StagingEngine::copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                                xfer_path_reason reason, bool page_locking, bool *taken) noexcept {
    *taken = false;
    if (!start()) {
        return XFER_SUCCESS;
    }
    if (dir == XFER_TO_HOST) {
        try {
            host_writes_.begin(stream);
        } catch (const std::bad_alloc &) {
            return fail(XFER_ERROR_OUT_OF_MEMORY, "staged copy of %zu bytes: out of host memory for its bookkeeping",
                        bytes);
        }
    }
    std::string why;
    const xfer_status st =
        pipeline_->submit(device, host, bytes, dir == XFER_TO_DEVICE ? Way::to_device : Way::to_host, stream,
                          !config_.asynchronous, taken, &why, reason, page_locking && dir == XFER_TO_DEVICE);
    if (dir == XFER_TO_HOST && !*taken) {
        host_writes_.end(stream); // nothing queued; the caller copies the direct way (or fails)
    }
    if (st == XFER_ERROR_SLOW_PATH) {
        return st; // the core's refusal, its message already set
    }
    if (st != XFER_SUCCESS) {
        return fail(st, "%s", why.c_str());
    }
    return XFER_SUCCESS;
}

xfer_status StagingEngine::take_stream_error(cudaStream_t stream) noexcept {
    StagingPipeline *pipeline = live_.load(std::memory_order_acquire);
    if (pipeline == nullptr) {
        return XFER_SUCCESS;
    }
    xfer_status st = XFER_SUCCESS;
    std::string message;
    if (!pipeline->take_stream_error(stream, &st, &message)) {
        return XFER_SUCCESS;
    }
    return fail(st, "%s", message.c_str());
}

void StagingEngine::abandon(cudaStream_t stream) noexcept {
    if (StagingPipeline *pipeline = live_.load(std::memory_order_acquire)) {
        pipeline->abandon(stream, XFER_ERROR_BACKEND,
                          stream != nullptr ? "staged copy given up: its stream failed"
                                            : "staged copy given up: the device failed");
    }
}

void StagingEngine::stream_destroyed(cudaStream_t stream) noexcept {
    if (StagingPipeline *pipeline = live_.load(std::memory_order_acquire)) {
        pipeline->forget_stream(stream);
    }
}

xfer_status StagingEngine::close() noexcept {
    std::lock_guard<std::mutex> lock(start_mutex_);
    if (!usable_) {
        return XFER_SUCCESS;
    }
    usable_ = false;
    live_.store(nullptr, std::memory_order_release);
    // Every stream of the context was waited for before this (the core destroys them first),
    // so every staged copy is done; close() only makes sure of it and stops the threads.
    pipeline_->close();
    xfer_status result = XFER_SUCCESS;
    pipeline_.reset();
    result = last_failure(result, check(cudaFreeHost(arena_), "cudaFreeHost (staging arena)"));
    result = last_failure(result, check(cudaFreeHost(words_), "cudaFreeHost (staging flags)"));
    arena_ = words_ = nullptr;
    return result;
}

} // namespace xfer::cuda::pageable

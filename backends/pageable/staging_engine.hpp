// SPDX-License-Identifier: Apache-2.0
// The pageable backend's staging engine: the context's hook for copies between pageable host
// memory and device memory that the copy policy stages (src/user_memory/copy_policy.hpp in
// cuda_common decides which). It owns the page-locked arena and the mapped flag words, and
// hands staged copies to the StagingPipeline (staging_pipeline.hpp:
// how a staged copy runs, and why no engine thread calls CUDA) over a CudaDeviceQueue.
// The arena, the words and the threads are made at the context's first staged copy and kept
// until xfer_close, never per copy.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda_device_queue.hpp"
#include "staging_pipeline.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer.h>

namespace xfer::cuda::pageable {

struct EngineConfig {
    // false ("sync"): the call returns once the user's memory was read (to the device) or
    // written (to the host); true ("async"): at once, the stream waiting for the bytes.
    bool asynchronous = true;
    std::size_t threads = 0;             // workers (resolved: never 0 here)
    std::size_t slots = 0;               // page-locked slots of chunk_bytes: the arena
    std::size_t chunk_bytes = 0;         // largest DMA chunk
    std::chrono::microseconds linger{0}; // idle workers watch for the next copy this long, then leave
    std::size_t linger_workers = 0;      // at most this many of them; the others leave at once
    bool demote = false;                 // filled head, remainder and tail pieces leave the cores' caches
};

class StagingEngine final : public HostCopyHook {
  public:
    // `owner` is the context the engine belongs to (its device, its HostWriteTracker); it
    // outlives the engine.
    StagingEngine(const Context &owner, const EngineConfig &config) noexcept;
    ~StagingEngine() override;

    xfer_status copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                     xfer_path_reason reason, bool page_locking, bool *taken) noexcept override;
    xfer_status take_stream_error(cudaStream_t stream) noexcept override;
    void abandon(cudaStream_t stream) noexcept override;
    void stream_destroyed(cudaStream_t stream) noexcept override;
    xfer_status close() noexcept override;

    const EngineConfig &config() const noexcept { return config_; }

  private:
    bool start() noexcept; // makes the arena, the words and the pipeline; once
    void release() noexcept;

    const Context &owner_;
    HostWriteTracker &host_writes_;
    const EngineConfig config_;

    std::mutex start_mutex_;
    bool tried_ = false;
    bool usable_ = false;
    std::string unusable_why_;

    void *arena_ = nullptr;
    void *words_ = nullptr; // mapped page-locked flag words
    CudaDeviceQueue queue_;
    std::unique_ptr<StagingPipeline> pipeline_;
    // pipeline_ once started, for the calls that may come from any thread meanwhile
    // (take_stream_error, abandon, stream_destroyed) without start_mutex_.
    std::atomic<StagingPipeline *> live_{nullptr};
};

} // namespace xfer::cuda::pageable

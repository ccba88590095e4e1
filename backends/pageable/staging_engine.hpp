// SPDX-License-Identifier: Apache-2.0
// The pageable backend's staging engine: copies between pageable host memory and device memory
// at page-locked speed, truly asynchronous and in stream order.
//
// Two modes (EngineConfig::asynchronous). In both the workers below do the copying and the
// copy starts when the user's stream reaches it.
//
// How an asynchronous staged copy runs. At call time three things are queued and the call returns:
//   1. on the user's stream, a write of a *ready* flag (StreamGate::signal_from_stream) when
//      the stream reaches it, so the copy starts after all earlier work on that stream (e.g.
//      a to-host copy into the same host range). A worker polls the flags of queued copies.
//      Not a host function: CUDA runs every host function of the process on one thread, so
//      one that blocks (a user's) would stall every staged copy behind it;
//   2. on the user's stream, a gate (StreamGate::hold): later work on that stream waits until
//      the copy's bytes have arrived;
//   3. the job, in the engine's queue.
// N workers (host threads), each owning whole chunks and S/N page-locked slots, take chunks of
// ready jobs. To the device: memcpy the chunk into a slot, cudaMemcpyAsync it on the engine's
// H2D stream; the worker that queues a job's last chunk opens the gate from that stream
// (cuStreamWriteValue32 after the DMAs). To the host: cudaMemcpyAsync into a slot on the
// engine's D2H stream, wait for it, memcpy into the user's memory; the worker that copies the
// last chunk opens the gate from the host.
// Why the gate is not the default: while it holds a stream, the copy can only finish through
// the workers' CUDA calls, and a CUDA call that waits for the whole context while holding the
// runtime's lock (a kernel's first launch under lazy module loading, cudaFree, cudaFreeHost)
// made by any thread then blocks those calls: a deadlock, seen on the H200 with a kernel
// launched between two staged copies. The synchronous mode holds no stream.
// The slots and the threads are made at the first staged copy and reused for the context's
// life, never per copy.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <cuda_runtime_api.h>

#include "stream_gate.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer.h>

namespace xfer::cuda::pageable {

struct EngineConfig {
    // false ("sync"): the call returns once the bytes are in the user's memory
    // (to host) or queued behind the engine's DMAs with the stream made to wait for them by an
    // event (to device); no gate holds the stream, so no CUDA call of another thread can get
    // stuck behind it. true ("async"): the call returns at once and a gate holds the stream.
    bool asynchronous = false;
    std::size_t threads = 0;          // workers (resolved: never 0 here)
    std::size_t slots = 0;            // page-locked slots, shared out among the workers
    std::size_t chunk_bytes = 0;      // bytes per slot and largest chunk
    std::size_t staged_min_bytes = 0; // smaller copies go straight to cudaMemcpyAsync
};

class StagingEngine final : public HostCopyHook {
  public:
    // `owner` is the context the engine belongs to (its device, its HostWriteTracker); it
    // outlives the engine.
    StagingEngine(const Context &owner, const EngineConfig &config) noexcept;
    ~StagingEngine() override;

    xfer_status copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                     bool *taken) noexcept override;
    xfer_status take_stream_error(cudaStream_t stream) noexcept override;
    xfer_status close() noexcept override;

    const EngineConfig &config() const noexcept { return config_; }

  private:
    struct Job;
    struct Slot {
        unsigned char *memory = nullptr;
        cudaEvent_t done = nullptr; // after the slot's last DMA
    };
    struct Claim {
        std::shared_ptr<Job> job;
        std::size_t index = 0;
        Slot *slot = nullptr;
        bool queued = false; // to-host: its DMA into the slot was queued
    };

    bool start() noexcept; // makes slots, streams, the gate and the workers; once
    void stop_workers() noexcept;
    bool claim(bool wait, Claim *out);
    bool poll_ready_locked() noexcept; // marks jobs whose stream reached them; true if any
    void worker(std::size_t index) noexcept;
    void to_device(Claim &c) noexcept;
    void to_host_dma(Claim &c) noexcept;
    void to_host_finish(Claim &c) noexcept;
    void chunk_done(Job &job) noexcept;
    void complete(Job &job) noexcept;
    void wait_for(const Job &job) noexcept;
    xfer_status finish_synchronously(Job &job, bool *taken) noexcept;

    const Context &owner_;
    HostWriteTracker &host_writes_;
    const EngineConfig config_;

    std::mutex start_mutex_;
    bool tried_ = false;
    bool usable_ = false;
    std::string unusable_why_;

    void *slot_memory_ = nullptr;
    std::vector<std::vector<Slot>> worker_slots_;
    cudaStream_t h2d_ = nullptr;
    cudaStream_t d2h_ = nullptr;
    StreamGate gate_;
    std::vector<std::thread> workers_;

    std::mutex mutex_;
    std::condition_variable work_;          // a job became ready, or stopping
    std::condition_variable idle_;          // a job completed
    std::list<std::shared_ptr<Job>> queue_; // jobs with chunks not yet claimed
    std::size_t in_flight_ = 0;
    bool stopping_ = false;
    bool polling_ = false; // a worker is polling the ready flags
    std::unordered_map<cudaStream_t, std::pair<xfer_status, std::string>> stream_errors_;
};

} // namespace xfer::cuda::pageable

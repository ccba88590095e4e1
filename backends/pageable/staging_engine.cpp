// SPDX-License-Identifier: Apache-2.0
#include "staging_engine.hpp"

#include <chrono>
#include <cstring>
#include <deque>
#include <new>

#include "staging_plan.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda::pageable {

struct StagingEngine::Job {
    StagingEngine *engine = nullptr;
    xfer_direction dir = XFER_TO_DEVICE;
    unsigned char *device = nullptr;
    unsigned char *host = nullptr;
    std::size_t bytes = 0;
    std::size_t chunk = 0;
    std::size_t chunks = 0;
    cudaStream_t stream = nullptr;
    StreamGate::Ticket ticket; // the gate the user's stream waits at
    StreamGate::Ticket start;  // the flag the user's stream sets when it reaches the copy
    // Under the engine's mutex_:
    bool ready = false;
    std::size_t next = 0;
    bool completed = false;
    bool gated = false; // asynchronous: the user's stream waits at `ticket`
    // Chunks whose work is finished (or skipped after a failure).
    std::atomic<std::size_t> done{0};
    // The first failure, which the stream reports (take_stream_error).
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    xfer_status error = XFER_SUCCESS;
    std::string message;

    void fail_with(cudaError_t err, const std::string &call) {
        (void)cudaGetLastError();
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error == XFER_SUCCESS) {
            error = status_from_cuda(err);
            message = "staged copy of " + std::to_string(bytes) + " bytes " +
                      (dir == XFER_TO_DEVICE ? "to the device" : "to the host") + ": " + call + ": " +
                      cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + "=" + std::to_string(int(err)) + ")";
        }
        failed.store(true, std::memory_order_release);
    }
};

StagingEngine::StagingEngine(const Context &owner, const EngineConfig &config) noexcept
    : owner_(owner), host_writes_(owner.host_writes), config_(config) {}

StagingEngine::~StagingEngine() { (void)close(); }

bool StagingEngine::start() noexcept {
    std::lock_guard<std::mutex> lock(start_mutex_);
    if (tried_) {
        return usable_;
    }
    // Tried once: page-locked memory the host cannot give now would be refused again, slowly,
    // on every copy; the direct path serves the context instead.
    tried_ = true;
    if (!gate_.start(&unusable_why_)) {
        return false;
    }
    const std::size_t per_worker = std::max<std::size_t>(1, config_.slots / config_.threads);
    const std::size_t total = per_worker * config_.threads * config_.chunk_bytes;
    bool ok = cudaHostAlloc(&slot_memory_, total, cudaHostAllocDefault) == cudaSuccess;
    int least = 0;
    int greatest = 0;
    ok = ok && cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess;
    // The engine's DMAs are on the critical path of the user's stream (it waits at the gate).
    ok = ok && cudaStreamCreateWithPriority(&h2d_, cudaStreamNonBlocking, greatest) == cudaSuccess;
    ok = ok && cudaStreamCreateWithPriority(&d2h_, cudaStreamNonBlocking, greatest) == cudaSuccess;
    try {
        worker_slots_.resize(config_.threads);
        auto *memory = static_cast<unsigned char *>(slot_memory_);
        for (std::size_t w = 0; ok && w < config_.threads; ++w) {
            for (std::size_t k = 0; ok && k < per_worker; ++k) {
                Slot s;
                s.memory = memory + (w * per_worker + k) * config_.chunk_bytes;
                ok = cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming | cudaEventBlockingSync) == cudaSuccess;
                if (ok) {
                    worker_slots_[w].push_back(s);
                }
            }
        }
        for (std::size_t w = 0; ok && w < config_.threads; ++w) {
            workers_.emplace_back(&StagingEngine::worker, this, w);
        }
    } catch (...) {
        ok = false;
    }
    (void)cudaGetLastError();
    if (!ok) {
        unusable_why_ = "the staging slots, streams or worker threads could not be made";
        stop_workers();
        for (auto &slots : worker_slots_) {
            for (Slot &s : slots) {
                (void)cudaEventDestroy(s.done);
            }
        }
        worker_slots_.clear();
        if (h2d_ != nullptr) (void)cudaStreamDestroy(h2d_);
        if (d2h_ != nullptr) (void)cudaStreamDestroy(d2h_);
        if (slot_memory_ != nullptr) (void)cudaFreeHost(slot_memory_);
        h2d_ = d2h_ = nullptr;
        slot_memory_ = nullptr;
        gate_.stop();
        (void)cudaGetLastError();
        return false;
    }
    usable_ = true;
    return true;
}

xfer_status StagingEngine::copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                                bool *taken) noexcept {
    *taken = false;
    // A small copy to the device goes the driver's way unless earlier work on its stream may
    // still write the host memory it reads (the driver reads it now): then the engine orders it.
    const bool at_risk = dir == XFER_TO_DEVICE && host_writes_.pending(stream);
    if (bytes < config_.staged_min_bytes && !at_risk) {
        return XFER_SUCCESS;
    }
    if (!start()) {
        return XFER_SUCCESS;
    }
    std::shared_ptr<Job> job;
    try {
        job = std::make_shared<Job>();
        job->gated = config_.asynchronous;
        job->start = gate_.acquire();
        if (job->gated) {
            try {
                job->ticket = gate_.acquire();
            } catch (...) {
                gate_.give_back(job->start);
                throw;
            }
        }
    } catch (const std::bad_alloc &) {
        return fail(XFER_ERROR_OUT_OF_MEMORY, "staged copy of %zu bytes: out of host memory for its bookkeeping",
                    bytes);
    }
    job->engine = this;
    job->dir = dir;
    job->device = static_cast<unsigned char *>(device);
    job->host = static_cast<unsigned char *>(host);
    job->bytes = bytes;
    job->chunk = plan_chunk(bytes, config_.threads, config_.chunk_bytes);
    job->chunks = chunk_count(bytes, job->chunk);
    job->stream = stream;
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(job);
        ++in_flight_;
        if (dir == XFER_TO_HOST) {
            host_writes_.begin(stream);
        }
    } catch (const std::bad_alloc &) {
        if (job->gated) {
            gate_.give_back(job->ticket);
        }
        gate_.give_back(job->start);
        return fail(XFER_ERROR_OUT_OF_MEMORY, "staged copy of %zu bytes: out of host memory for its bookkeeping",
                    bytes);
    }
    const int signalled = gate_.signal_from_stream(stream, job->start);
    if (signalled != 0) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            queue_.remove(job);
            --in_flight_;
        }
        if (dir == XFER_TO_HOST) {
            host_writes_.end(stream);
        }
        if (job->gated) {
            gate_.give_back(job->ticket);
        }
        gate_.give_back(job->start);
        return fail(XFER_ERROR_BACKEND,
                    "cuStreamWriteValue32 (the start of a staged copy of %zu bytes, in stream "
                    "order): CUresult %d",
                    bytes, signalled);
    }
    work_.notify_one(); // a sleeping worker starts polling for it
    if (!job->gated) {
        return finish_synchronously(*job, taken);
    }
    if (auto st = gate_.hold(stream, job->ticket)) {
        // The copy will still run when the stream reaches it; without the gate nothing later
        // on the stream would wait for it, so this call waits instead.
        wait_for(*job);
        return st;
    }
    *taken = true;
    return XFER_SUCCESS;
}

bool StagingEngine::poll_ready_locked() noexcept {
    bool any = false;
    for (const auto &job : queue_) {
        if (!job->ready && gate_.is_open(job->start)) {
            job->ready = true;
            gate_.recycle(job->start);
            any = true;
        }
    }
    return any;
}

bool StagingEngine::claim(bool wait, Claim *out) {
    std::unique_lock<std::mutex> lock(mutex_);
    int idle_rounds = 0;
    for (;;) {
        if (poll_ready_locked()) {
            work_.notify_all();
        }
        bool waiting = false;
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
            Job &j = **it;
            if (!j.ready) {
                waiting = true;
                continue;
            }
            out->job = *it;
            out->index = j.next++;
            if (j.next == j.chunks) {
                queue_.erase(it);
            }
            return true;
        }
        if (stopping_ || !wait) {
            return false;
        }
        if (waiting && !polling_) {
            // One worker polls the ready flags of queued copies whose streams have not reached
            // them yet: a few rounds of yielding (a stream usually gets there within
            // microseconds), then short sleeps, so a copy waiting behind a long kernel costs
            // little CPU yet starts within ~50 us of the kernel's end.
            polling_ = true;
            lock.unlock();
            if (idle_rounds < 200) {
                std::this_thread::yield();
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(idle_rounds < 1000 ? 10 : 50));
            }
            ++idle_rounds;
            lock.lock();
            polling_ = false;
            continue;
        }
        work_.wait(lock);
        idle_rounds = 0;
    }
}

void StagingEngine::worker(std::size_t index) noexcept {
    (void)cudaSetDevice(owner_.device);
    std::vector<Slot> &slots = worker_slots_[index];
    std::vector<bool> busy(slots.size(), false);
    std::size_t next_slot = 0;
    std::deque<Claim> pending; // to-host chunks whose DMA is queued, oldest first
    auto take_slot = [&]() -> Slot * {
        for (std::size_t k = 0; k < slots.size(); ++k) {
            const std::size_t i = (next_slot + k) % slots.size();
            if (!busy[i]) {
                busy[i] = true;
                next_slot = i + 1;
                return &slots[i];
            }
        }
        return nullptr;
    };
    auto give_slot = [&](Slot *s) { busy[static_cast<std::size_t>(s - slots.data())] = false; };
    for (;;) {
        const bool room = pending.size() < slots.size();
        Claim c;
        // Block for work only with nothing of our own in flight.
        if (room && claim(pending.empty(), &c)) {
            c.slot = take_slot();
            if (c.job->dir == XFER_TO_DEVICE) {
                to_device(c);
                give_slot(c.slot);
            } else {
                to_host_dma(c);
                pending.push_back(std::move(c));
            }
            continue;
        }
        if (!pending.empty()) {
            Claim &oldest = pending.front();
            to_host_finish(oldest);
            give_slot(oldest.slot);
            pending.pop_front();
            continue;
        }
        if (room) {
            return; // claim() waited and found the engine stopping
        }
    }
}

void StagingEngine::to_device(Claim &c) noexcept {
    Job &j = *c.job;
    const Span s = nth_chunk(j.bytes, j.chunk, c.index);
    if (!j.failed.load(std::memory_order_acquire)) {
        // The slot's previous DMA (this worker's, one round ago) must have read it.
        cudaError_t err = cudaEventSynchronize(c.slot->done);
        if (err != cudaSuccess) {
            j.fail_with(err, "cudaEventSynchronize (a staging slot's previous DMA)");
        } else {
            std::memcpy(c.slot->memory, j.host + s.offset, s.bytes);
            err = cudaMemcpyAsync(j.device + s.offset, c.slot->memory, s.bytes, cudaMemcpyHostToDevice, h2d_);
            if (err != cudaSuccess) {
                j.fail_with(err, "cudaMemcpyAsync(chunk " + std::to_string(c.index + 1) + " of " +
                                     std::to_string(j.chunks) + ", cudaMemcpyHostToDevice from a staging slot)");
            } else if ((err = cudaEventRecord(c.slot->done, h2d_)) != cudaSuccess) {
                j.fail_with(err, "cudaEventRecord (staging slot after its DMA)");
                (void)cudaStreamSynchronize(h2d_); // never refill a slot under a running DMA
            }
        }
    }
    chunk_done(j);
}

void StagingEngine::to_host_dma(Claim &c) noexcept {
    Job &j = *c.job;
    const Span s = nth_chunk(j.bytes, j.chunk, c.index);
    c.queued = false;
    if (j.failed.load(std::memory_order_acquire)) {
        return;
    }
    // The slot's last DMA may have been a to-device one on the other engine stream, still
    // reading it: the copy engine must not overwrite it before that is done.
    cudaError_t err = cudaStreamWaitEvent(d2h_, c.slot->done, 0);
    if (err != cudaSuccess) {
        j.fail_with(err, "cudaStreamWaitEvent (a staging slot's previous DMA)");
        return;
    }
    err = cudaMemcpyAsync(c.slot->memory, j.device + s.offset, s.bytes, cudaMemcpyDeviceToHost, d2h_);
    if (err != cudaSuccess) {
        j.fail_with(err, "cudaMemcpyAsync(chunk " + std::to_string(c.index + 1) + " of " + std::to_string(j.chunks) +
                             ", cudaMemcpyDeviceToHost into a staging slot)");
        return;
    }
    if ((err = cudaEventRecord(c.slot->done, d2h_)) != cudaSuccess) {
        j.fail_with(err, "cudaEventRecord (staging slot after its DMA)");
        (void)cudaStreamSynchronize(d2h_);
        return;
    }
    c.queued = true;
}

void StagingEngine::to_host_finish(Claim &c) noexcept {
    Job &j = *c.job;
    if (c.queued) {
        const Span s = nth_chunk(j.bytes, j.chunk, c.index);
        const cudaError_t err = cudaEventSynchronize(c.slot->done);
        if (err != cudaSuccess) {
            j.fail_with(err, "cudaEventSynchronize (chunk " + std::to_string(c.index + 1) + " of " +
                                 std::to_string(j.chunks) + " arriving in a staging slot)");
        } else if (!j.failed.load(std::memory_order_acquire)) {
            std::memcpy(j.host + s.offset, c.slot->memory, s.bytes);
        }
    }
    chunk_done(j);
}

void StagingEngine::chunk_done(Job &j) noexcept {
    if (j.done.fetch_add(1, std::memory_order_acq_rel) + 1 == j.chunks) {
        complete(j);
    }
}

void StagingEngine::complete(Job &j) noexcept {
    if (!j.gated) {
        if (j.dir == XFER_TO_HOST) {
            host_writes_.end(j.stream);
        }
    } else if (j.dir == XFER_TO_DEVICE) {
        // Every DMA of the job is queued on h2d_ (each worker counted its chunk after queuing
        // it): the stream opens the gate once they are done.
        const int r = gate_.open_from_stream(h2d_, j.ticket);
        if (r != 0) {
            j.fail_with(cudaErrorUnknown,
                        "cuStreamWriteValue32 (opening the gate after the DMAs): CUresult " + std::to_string(r));
            (void)cudaStreamSynchronize(h2d_);
            gate_.open_from_host(j.ticket);
        }
    } else {
        host_writes_.end(j.stream);
        gate_.open_from_host(j.ticket);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (j.gated && j.failed.load(std::memory_order_acquire)) {
            // Asynchronous: no call is left to return it; the stream reports it.
            std::lock_guard<std::mutex> error_lock(j.error_mutex);
            try {
                stream_errors_.emplace(j.stream, std::make_pair(j.error, j.message));
            } catch (...) {
                // No memory to keep the message: the failure is lost, the stream still runs on.
            }
        }
        j.completed = true;
        --in_flight_;
    }
    idle_.notify_all();
}

xfer_status StagingEngine::finish_synchronously(Job &job, bool *taken) noexcept {
    wait_for(job);
    *taken = true;
    if (job.failed.load(std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(job.error_mutex);
        return fail(job.error, "%s", job.message.c_str());
    }
    if (job.dir == XFER_TO_HOST) {
        return XFER_SUCCESS; // every byte is in the user's memory
    }
    // Every DMA of the job is queued on h2d_: later work on the user's stream waits for them
    // through an event, a dependency CUDA sees (no gate).
    cudaEvent_t queued = nullptr;
    if (auto st = check(cudaEventCreateWithFlags(&queued, cudaEventDisableTiming),
                        "cudaEventCreateWithFlags (the end of a staged copy's DMAs)")) {
        (void)cudaStreamSynchronize(h2d_);
        return st;
    }
    xfer_status st = check(cudaEventRecord(queued, h2d_), "cudaEventRecord (the end of a staged copy's DMAs)");
    if (st == XFER_SUCCESS) {
        st = check(cudaStreamWaitEvent(job.stream, queued, 0), "cudaStreamWaitEvent (the stream waits for a staged "
                                                               "copy's DMAs)");
    }
    if (st != XFER_SUCCESS) {
        (void)cudaStreamSynchronize(h2d_);
    }
    (void)cudaEventDestroy(queued); // released by CUDA once the record has completed
    return st;
}

void StagingEngine::wait_for(const Job &job) noexcept {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return job.completed; });
}

xfer_status StagingEngine::take_stream_error(cudaStream_t stream) noexcept {
    std::pair<xfer_status, std::string> e;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = stream_errors_.find(stream);
        if (it == stream_errors_.end()) {
            return XFER_SUCCESS;
        }
        e = std::move(it->second);
        stream_errors_.erase(it);
    }
    return fail(e.first, "%s", e.second.c_str());
}

void StagingEngine::stop_workers() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    work_.notify_all();
    for (std::thread &t : workers_) {
        t.join();
    }
    workers_.clear();
}

xfer_status StagingEngine::close() noexcept {
    {
        // Every stream of the context was waited for before this (the core destroys them
        // first), so every job has completed; this only makes sure of it.
        std::unique_lock<std::mutex> lock(mutex_);
        idle_.wait(lock, [&] { return in_flight_ == 0; });
    }
    stop_workers();
    std::lock_guard<std::mutex> lock(start_mutex_);
    if (!usable_) {
        return XFER_SUCCESS;
    }
    usable_ = false;
    xfer_status result = XFER_SUCCESS;
    result = last_failure(result, check(cudaStreamSynchronize(h2d_), "cudaStreamSynchronize (staging engine, H2D)"));
    result = last_failure(result, check(cudaStreamSynchronize(d2h_), "cudaStreamSynchronize (staging engine, D2H)"));
    for (auto &slots : worker_slots_) {
        for (Slot &s : slots) {
            result = last_failure(result, check(cudaEventDestroy(s.done), "cudaEventDestroy (staging slot)"));
        }
    }
    worker_slots_.clear();
    result = last_failure(result, check(cudaStreamDestroy(h2d_), "cudaStreamDestroy (staging engine, H2D)"));
    result = last_failure(result, check(cudaStreamDestroy(d2h_), "cudaStreamDestroy (staging engine, D2H)"));
    result = last_failure(result, check(cudaFreeHost(slot_memory_), "cudaFreeHost (staging slots)"));
    h2d_ = d2h_ = nullptr;
    slot_memory_ = nullptr;
    gate_.stop();
    return result;
}

} // namespace xfer::cuda::pageable

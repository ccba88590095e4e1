// SPDX-License-Identifier: Apache-2.0
// The pageable backend's staging pipeline: copies between pageable host memory and device
// memory through a page-locked arena, truly asynchronously and in stream order, with no CUDA
// call made by any of its threads. CUDA-free (the device side is a DeviceQueue), so the whole
// protocol is tested in CI with a fake queue, under ASan and TSan too.
//
// A copy of `bytes` is cut into DMA chunks (staging_plan.hpp). At call time it reserves k
// slots of the arena (a slot holds one chunk) and queues *everything* on the user's stream:
//   to the device, for chunk i in slot s, use u:  wait host[s] >= u; DMA slot -> device;
//                                                 write device[s] = u
//     (preceded by a write of the copy's *ready* word, so no worker reads the user's memory
//     before earlier work on the stream, e.g. a copy to the host of the same range, is done;
//     not waited for when the stream had nothing left to run at submission: DeviceQueue::idle);
//   to the host:                                  wait host[s] >= u - 1; DMA device -> slot;
//                                                 write device[s] = u
//     (followed by waits host[s] >= last use of every slot: later work on the stream waits
//     until the bytes are in the user's memory).
// host[s] and device[s] are 32-bit words in mapped page-locked memory; `wait` and `write` are
// CUDA's stream memory operations, compared as the driver does (wrap-around safe). The
// pipeline's workers only poll words, memcpy pieces of chunks between the user's memory and
// the slots, and store words: to the device, fill chunk i once device[s] >= u - 1 (the slot's
// previous DMA has read it) and then store host[s] = u; to the host, drain chunk i once
// device[s] >= u and then store host[s] = u.
// Why nothing but the calling thread touches CUDA: a CUDA call that waits for the whole
// context under the runtime's lock (a kernel's first launch under lazy module loading,
// cudaFree, cudaFreeHost), made by any thread while a stream waits for the workers, would
// otherwise block the workers' own CUDA calls: a deadlock (an engine that queued its DMAs from
// its workers deadlocked so on the H200, with a kernel launched between two staged copies).
// Here the stream's progress needs only the workers' memcpy and stores.
// Why not host functions (cudaLaunchHostFunc): CUDA runs them on one thread of the process,
// so a user's blocking host function would stall every staged copy.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <xfer/xfer.h>

namespace boost::asio {
class thread_pool;
}

namespace xfer::cuda::pageable {

// A 32-bit word both sides see: the host through `host`, a stream through `device` (the
// CUdeviceptr of the same mapped word; in tests, any token the fake queue understands).
struct FlagWord {
    std::uint32_t *host = nullptr;
    std::uint64_t device = 0;
};

// One stream memory operation: wait until `word` >= value (wrap-around compare), or write
// `value` into `word` once the stream's earlier work is done (with a memory fence, so the
// bytes of an earlier DMA are visible first).
struct FlagOp {
    enum Kind { wait, write } kind = wait;
    FlagWord word;
    std::uint32_t value = 0;
};

enum class Way { to_device, to_host };

// What the pipeline queues on users' streams. CUDA in the backend (CudaDeviceQueue); a fake
// that runs each stream on a thread in the tests. Calls come from the thread that submits a
// copy, except health(), which the watchdog calls.
class DeviceQueue {
  public:
    virtual ~DeviceQueue() = default;
    // Queues the operations, in order, on `stream`. On failure: the status, *why the call.
    virtual xfer_status flags(void *stream, const FlagOp *ops, std::size_t count, std::string *why) noexcept = 0;
    // Queues a copy between a slot (page-locked) and device memory on `stream`.
    virtual xfer_status copy(void *stream, void *dst, const void *src, std::size_t bytes, Way way,
                             std::string *why) noexcept = 0;
    // Without waiting: XFER_SUCCESS while `stream` is healthy (busy or idle), else its failure.
    virtual xfer_status health(void *stream, std::string *why) noexcept = 0;
    // Without waiting: true only if every operation queued on `stream` so far has completed
    // (false when busy, failed or unknown). Asked by the thread that submits a copy, before
    // queuing it: the copy's ready wait is then already met.
    virtual bool idle(void *stream) noexcept = 0;
};

// Sets *out to what `make` returns; an allocation failure leaves *out as it was (for messages
// built inside noexcept code).
template <class Make>
void describe_into(std::string *out, Make &&make) noexcept {
    try {
        *out = make();
    } catch (...) {}
}

// Whether `word` has reached `target`, as the driver's GEQ compares: (int32)(value - target) >= 0.
inline bool reached(const std::uint32_t *word, std::uint32_t target) noexcept {
    return static_cast<std::int32_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - target) >= 0;
}

struct PipelineConfig {
    std::size_t threads = 1;     // workers
    std::size_t chunk_bytes = 0; // largest DMA chunk
    std::size_t arena_bytes = 0; // page-locked staging memory, in granules of kArenaGranuleBytes
    // A job whose stream made no progress for this long is checked with DeviceQueue::health.
    std::chrono::milliseconds stall{100};
    // Up to `linger_workers` workers left without copies keep watching for the next one this
    // long (spinning, yielding) before they leave their host thread; the others leave at
    // once. A copy then starts on the lingering ones, which wake the rest: its submitting thread
    // wakes no thread (linger 0 or linger_workers 0: every worker leaves at once).
    std::chrono::microseconds linger{0};
    std::size_t linger_workers = 0;
    // Workers push the pieces they fill of chunks bound for the device out of their cores'
    // caches where plan_demotes says so (staging_plan.hpp), and what they read of a source a
    // copy asks them to (submit's demote_source).
    bool demote = false;
    // Called (from a worker) when a copy to the host has written its last byte into the
    // user's memory or was given up: the HostWriteTracker's end().
    std::function<void(void *stream)> host_writes_done;
    // Called on the watchdog's thread before its first DeviceQueue::health (makes the device current).
    std::function<void()> watchdog_start;
    // Runs a worker on one of the context's host threads (the one pool the context's host-side
    // engines share); false when it cannot. Empty: the pipeline runs its workers on a pool of
    // its own (the CUDA-free tests).
    std::function<bool(std::function<void()>)> run_on_host_thread;
};

class StagingPipeline {
  public:
    // `arena`: arena_bytes of page-locked memory; `words`: flag_words_needed(arena_bytes)
    // words of mapped memory, all 0. Both outlive the pipeline. config.chunk_bytes >= 4096.
    StagingPipeline(DeviceQueue &queue, const PipelineConfig &config, unsigned char *arena,
                    std::vector<FlagWord> words);
    // Starts the workers (on the host threads) and the watchdog; false (none left running) if
    // not one worker could be started. Call once, before submit.
    bool start() noexcept;
    ~StagingPipeline();
    StagingPipeline(const StagingPipeline &) = delete;
    StagingPipeline &operator=(const StagingPipeline &) = delete;

    static std::size_t flag_words_needed(std::size_t arena_bytes) noexcept;

    // Queues the copy on `stream` and sets *taken, or leaves *taken false (nothing queued: no
    // room in the arena now) for the caller to copy the direct way. With `wait_host` the call
    // returns once the user's memory was read (to the device) or written (to the host).
    // A failure: the status and *why, with *taken true if the pipeline had taken the copy (it
    // then calls host_writes_done itself); a failure while queuing leaves what was queued
    // harmless (its waits opened), and no worker touches the user's memory after the call.
    // `reason`: why the copy is staged (the copy policy's), its path record's reason unless
    // `wait_host` (then XFER_REASON_CONFIGURED: staging = sync chose that path).
    // `demote_source` (to the device, with `demote`): the workers also move the lines they read
    // of the user's memory out of their cores' caches (the range is being page-locked: later
    // copies are DMAs from it, which would fetch those lines from the cores).
    xfer_status submit(void *device, void *host, std::size_t bytes, Way way, void *stream, bool wait_host, bool *taken,
                       std::string *why, xfer_path_reason reason = XFER_REASON_NO_FASTER_PATH,
                       bool demote_source = false) noexcept;

    // Gives up every unfinished copy on `stream` (nullptr: on every stream) after its stream or
    // the device failed, and returns once no worker touches their memory any more: the caller
    // is about to tell the application that the work is over (a failed synchronisation).
    void abandon(void *stream, xfer_status status, const char *message) noexcept;

    // `stream` was waited for and is about to be destroyed: no query about it is in flight
    // when this returns, and none will be made.
    void forget_stream(void *stream) noexcept;

    // A failure of a copy on `stream` that no call has reported (found by the watchdog).
    bool take_stream_error(void *stream, xfer_status *status, std::string *message) noexcept;

    // Waits until every copy is done on both sides (its streams were waited for before), then
    // stops the threads. Copies given up after a failure leave their slots unused.
    void close() noexcept;

    // Counters for tests and `xfer-tool`: copies staged (and of them, those whose source the
    // workers demote), copies sent the direct way for want of arena room, copies given up; times
    // an idle worker left its host thread, and times a lingering worker found a new copy (and
    // woke the ones that left).
    struct Counters {
        std::uint64_t staged = 0;
        std::uint64_t source_demoted = 0;
        std::uint64_t no_room = 0;
        std::uint64_t given_up = 0;
        std::uint64_t sleeps = 0;
        std::uint64_t linger_pickups = 0;
    };
    Counters counters() const noexcept;

  private:
    struct Job;
    struct Claim {
        std::shared_ptr<Job> job;
        std::size_t chunk = 0;
        std::size_t piece = 0;
    };

    bool reserve_locked(std::size_t granules, std::size_t *first) noexcept;
    void reserve_slots_locked(Job &job, std::size_t want) noexcept; // as many as the arena has, up to want
    void release_locked(const Job &job) noexcept;
    bool chunk_eligible(Job &job, std::size_t chunk) noexcept;
    // The piece a worker copies next. Copies are served oldest first within each direction,
    // and the two directions in turn (next_way_): both copy engines stay fed, and each
    // direction's copies finish in the order they were queued, as the copy engines run pinned
    // copies. Not round robin over every copy: that moves all copies at once, so the overlap
    // workflow's three streams copy in lockstep (all to the device, then all to the host) and its
    // pipelined pass gains far less over the serial one (measured: docs/performance.md, the
    // overlap workflow).
    bool claim_locked(Claim *out) noexcept;
    void run(const Claim &c) noexcept;
    void chunk_done(Job &job) noexcept;
    void host_side_done_locked(const std::shared_ptr<Job> &job) noexcept;
    void open_waits_locked(const Job &j) noexcept;
    bool reap_locked() noexcept;
    // Gives the copy up: its waits opened, its unclaimed pieces counted done, its slots lost;
    // the failure kept for take_stream_error when `report_on_stream`.
    void abort_locked(const std::shared_ptr<Job> &job, xfer_status status, const char *message,
                      bool report_on_stream) noexcept;
    xfer_status enqueue(Job &job, std::string *why) noexcept;
    void worker() noexcept;
    // With no piece to claim (staging_idle.cpp): polls, watches the epoch or lingers and returns
    // true; or leaves the host thread (running_ counted down) and returns false.
    bool idle_locked(std::unique_lock<std::mutex> &lock, std::chrono::steady_clock::time_point &idle_since) noexcept;
    void linger_locked(std::unique_lock<std::mutex> &lock, std::chrono::steady_clock::time_point &idle_since) noexcept;
    // Posts the workers that left (or never started) to the host threads, up to config.threads;
    // returns how many it posted.
    std::size_t wake() noexcept;
    bool post_worker() noexcept;
    void watchdog() noexcept;

    DeviceQueue &queue_;
    const PipelineConfig config_;
    unsigned char *const arena_;
    const std::vector<FlagWord> words_; // three per granule: host, device, ready
    const std::size_t granules_;

    std::mutex watch_mutex_; // held while the watchdog asks about a stream; before mutex_
    mutable std::mutex mutex_;
    std::condition_variable finished_;          // a job's host side or whole life ended; a worker left
    std::vector<unsigned char> granule_state_;  // 0 free, 1 reserved, 2 lost (after a failure)
    std::vector<std::uint32_t> uses_;           // per granule: the last use value handed out
    std::vector<std::uint32_t> readies_;        // per granule: the last ready value handed out
    std::list<std::shared_ptr<Job>> claimable_; // jobs with pieces not yet claimed, oldest first
    Way next_way_ = Way::to_device;             // the direction claim_locked serves first next
    std::list<std::shared_ptr<Job>> jobs_;      // every job not finished on both sides
    std::unordered_map<void *, std::pair<xfer_status, std::string>> stream_errors_;
    Counters counters_;
    bool stopping_ = false;
    bool polling_ = false; // an idle worker looks for eligible chunks under mutex_ (worker())
    // Bumped when there may be something to claim (a claim, a submission): the idle workers
    // that are not polling watch it without the mutex.
    std::atomic<std::uint32_t> claim_epoch_{0};
    // Workers lingering now (changed under mutex_, read by submit without it).
    std::atomic<std::size_t> lingering_{0};
    // Workers posted to the host threads and not yet left (under mutex_): at most config.threads.
    std::size_t running_ = 0;
    std::unique_ptr<boost::asio::thread_pool> own_pool_; // without config.run_on_host_thread
    std::thread watchdog_;
};

} // namespace xfer::cuda::pageable

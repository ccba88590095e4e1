// SPDX-License-Identifier: Apache-2.0
#include "staging_pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include <xfer_plugin/paths.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "cache_demote.hpp"
#include "staging_nvtx.hpp"
#include "staging_plan.hpp"

namespace xfer::cuda::pageable {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

void store_release(std::uint32_t *word, std::uint32_t value) noexcept {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

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

// Granule states.
constexpr unsigned char kFree = 0;
constexpr unsigned char kReserved = 1;
constexpr unsigned char kLost = 2; // a failed copy's slot: its words may still move; never reused

} // namespace

struct StagingPipeline::Job {
    struct Slot {
        std::size_t granule = 0; // first granule; its words are the slot's
        std::size_t granules = 0;
        unsigned char *memory = nullptr;
        FlagWord host;   // the host's side: chunk filled (to device) or drained (to host)
        FlagWord device; // the stream's side: chunk's DMA done
        std::uint32_t first_use = 0;
    };

    Way way = Way::to_device;
    unsigned char *device = nullptr;
    unsigned char *host = nullptr;
    std::size_t bytes = 0;
    ChunkLayout layout;
    std::size_t threads = 1; // the pipeline's workers: each chunk is shared out among them
    void *stream = nullptr;
    std::vector<Slot> slots;
    FlagWord ready; // to device: the stream reached the copy
    std::uint32_t ready_value = 0;
    std::unique_ptr<std::atomic<std::size_t>[]> remaining; // per chunk: pieces not yet copied
    std::atomic<bool> aborted{false};
    std::atomic<std::int64_t> progress{0};

    // Under the pipeline's mutex_:
    bool ready_seen = false;
    std::size_t next_chunk = 0;
    std::size_t next_piece = 0;
    std::size_t chunks_done = 0;
    bool host_done = false;
    bool finished = false;
    xfer_status error = XFER_SUCCESS;
    std::string message;

    std::size_t chunks() const noexcept { return layout.count; }
    Span span(std::size_t i) const noexcept { return layout.span(i); }
    std::size_t piece_of(std::size_t i) const noexcept { return plan_piece(span(i).bytes, threads); }
    std::size_t pieces_in(std::size_t i) const noexcept { return chunk_count(span(i).bytes, piece_of(i)); }
    const Slot &slot_of(std::size_t i) const noexcept { return slots[i % slots.size()]; }
    std::uint32_t use_of(std::size_t i) const noexcept {
        return slot_of(i).first_use + static_cast<std::uint32_t>(i / slots.size());
    }
    // The last use of slot j (chunks j, j + k, ...), which the words of a finished copy show.
    std::uint32_t last_use(std::size_t j) const noexcept {
        const std::size_t k = slots.size();
        const std::size_t uses = j < chunks() ? (chunks() - j + k - 1) / k : 0;
        return slots[j].first_use + static_cast<std::uint32_t>(uses) - 1;
    }
};

StagingPipeline::StagingPipeline(DeviceQueue &queue, const PipelineConfig &config, unsigned char *arena,
                                 std::vector<FlagWord> words)
    : queue_(queue), config_(config), arena_(arena), words_(std::move(words)),
      granules_(config.arena_bytes / kArenaGranuleBytes), granule_state_(granules_, kFree), uses_(granules_, 0),
      readies_(granules_, 0) {}

bool StagingPipeline::start() noexcept {
    try {
        workers_.reserve(config_.threads);
        for (std::size_t i = 0; i < config_.threads; ++i) {
            workers_.emplace_back(&StagingPipeline::worker, this);
        }
        watchdog_ = std::thread(&StagingPipeline::watchdog, this);
        return true;
    } catch (...) {
        // A thread the system would not start (EAGAIN): the threads already running stop.
        close();
        return false;
    }
}

StagingPipeline::~StagingPipeline() { close(); }

// Each granule has three words: host side, device side (of a slot starting there), ready.
constexpr std::size_t kWordsPerGranule = 3;

std::size_t StagingPipeline::flag_words_needed(std::size_t arena_bytes) noexcept {
    return kWordsPerGranule * (arena_bytes / kArenaGranuleBytes);
}

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
                                    bool *taken, std::string *why, xfer_path_reason reason) noexcept {
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
        // A stream with nothing left to run has reached the copy already: the workers need not
        // wait for the stream to write the ready word (a few microseconds on the H200 machine,
        // more when the poller sleeps). Asked before anything of this copy is queued.
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
        // From here the pipeline owns the copy: it ends the host writes of a copy to the host
        // (host_writes_done) whatever happens, so the caller must not.
        *taken = true;
    }
    claim_epoch_.fetch_add(1, std::memory_order_release);
    // A lingering worker sees the epoch and wakes the sleeping ones itself (worker()): the
    // submitting thread then pays no futex wake-ups.
    if (lingering_.load(std::memory_order_acquire) == 0) {
        work_.notify_all();
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
        } else if (jobs_.empty()) {
            if (Clock::now() - idle_since < config_.linger &&
                lingering_.load(std::memory_order_relaxed) < config_.linger_workers) {
                // Lingering: the next copy's submission bumps the epoch, watched without the
                // mutex; the copy starts at once, and the submitter leaves waking the sleeping
                // workers to this one (see submit).
                lingering_.fetch_add(1, std::memory_order_relaxed); // under mutex_
                const std::uint32_t seen = claim_epoch_.load(std::memory_order_acquire);
                const auto until = idle_since + config_.linger;
                lock.unlock();
                while (claim_epoch_.load(std::memory_order_acquire) == seen && Clock::now() < until) {
                    back_off(std::chrono::nanoseconds(0));
                }
                lock.lock();
                // Checked and counted down under the mutex: a submitter that saw this worker
                // lingering (and did not wake the others) published its copy before this
                // check, so the copy is seen here and the sleepers are woken.
                lingering_.fetch_sub(1, std::memory_order_relaxed);
                if (!jobs_.empty()) {
                    ++counters_.linger_pickups;
                    // Woken outside the mutex: the futex calls take tens of microseconds, and
                    // the woken threads and the stream's progress need the mutex meanwhile.
                    lock.unlock();
                    work_.notify_all();
                    lock.lock();
                }
                if (claim_epoch_.load(std::memory_order_acquire) != seen) {
                    idle_since = Clock::now(); // a copy came: its waits are watched at full rate
                }
            } else {
                ++counters_.sleeps;
                work_.wait(lock);
                idle_since = Clock::now();
            }
        } else if (!polling_) {
            // While copies are in flight one idle worker polls their words for the stream's
            // progress under the mutex, so a chunk is claimed as soon as the stream frees it.
            polling_ = true;
            reap_locked();
            lock.unlock();
            back_off(Clock::now() - idle_since);
            lock.lock();
            polling_ = false;
        } else {
            // The other idle workers spin on the epoch, without the mutex (15 workers polling
            // under it slowed the threads that queue copies: pageable overlap 0.73-0.75x of
            // pinned's speed-up), and without a futex wake-up each (one poller waking the
            // others through the condition variable: 64 MiB to the device at 0.53-0.60x pinned).
            const std::uint32_t seen = claim_epoch_.load(std::memory_order_acquire);
            lock.unlock();
            const auto since = Clock::now();
            while (claim_epoch_.load(std::memory_order_acquire) == seen &&
                   Clock::now() - since < std::chrono::microseconds(200)) {
                back_off(Clock::now() - idle_since);
            }
            lock.lock();
        }
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
    work_.notify_all();
    finished_.notify_all();
    for (std::thread &t : workers_) {
        if (t.joinable()) {
            t.join();
        }
    }
    if (watchdog_.joinable()) {
        watchdog_.join();
    }
}

} // namespace xfer::cuda::pageable

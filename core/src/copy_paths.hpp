// SPDX-License-Identifier: Apache-2.0
// Which path each copy took (xfer.h, "which path each copy took"): a context's counters, its
// observer and slow-path policy, and CopyCall, the scope of one copy entry in which the
// backend's take_path notes (the core's services) are collected, judged and, once the backend
// returned, counted and reported.
//
// Cost: statistics are always on, so a copy call pays two clock reads (host_clock.hpp), a few
// additions to counters only its thread writes (no locked instruction: CallCounters) and one
// branch for the observer. The notes live on the caller's stack; the thread-local pointer to
// them is what take_path finds.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host_clock.hpp"
#include "nvtx_ranges.hpp"
#include <xfer/xfer.h>

namespace xfer::core {

class CopyStats;

// What a copy call needs of its context (objects.hpp's copy_context() gives it): its statistics,
// its backend's name (for messages) and its handle (for records).
struct CopyContext {
    CopyStats &stats;
    const std::string &backend;
    std::uint64_t handle;
};

// A context's counters (relaxed atomics: each is exact; a reader may see a copy half counted).
struct PathCounters {
    std::atomic<std::uint64_t> copies{0}, bytes{0}, ticks{0};
};

// The counters of every copy call: one set per thread that copies on a context, written by that
// thread alone (a relaxed load and store: a locked addition per counter cost more than the
// rest of the counting together), read and summed by xfer_context_get_stats (relaxed atomics, so
// reading while the thread counts is defined). One cache line or more of its own each.
struct alignas(64) CallCounters {
    PathCounters paths[XFER_PATH_COUNT];
    std::atomic<std::uint64_t> calls{0}, slow_copies{0};
};

// Sums of CallCounters, as plain numbers.
struct CallTotals {
    std::uint64_t copies[XFER_PATH_COUNT]{}, bytes[XFER_PATH_COUNT]{}, ticks[XFER_PATH_COUNT]{};
    std::uint64_t calls = 0, slow_copies = 0;
};

struct ObserverSlot {
    xfer_copy_observer_fn fn;
    void *user_data;
};

// The copy log of XFER_LOG=copies and of slow_path = warn: one line per record, to stderr or a
// file opened in append mode.
class CopyLog {
  public:
    // path "" or "-": stderr. `label` names the context in each line ("pageable:0"). Throws
    // Error(XFER_ERROR_CONFIG) when the file cannot be opened.
    CopyLog(const std::string &path, std::string label);
    ~CopyLog();
    CopyLog(const CopyLog &) = delete;
    CopyLog &operator=(const CopyLog &) = delete;
    void write(const xfer_copy_record &r) noexcept;
    // An xfer_copy_observer_fn whose user_data is the CopyLog.
    static void observer(const xfer_copy_record *record, void *log) noexcept;
    // The same for slow records only (slow_path = warn).
    static void slow_observer(const xfer_copy_record *record, void *log) noexcept;

  private:
    std::FILE *file_;
    bool owned_;
    std::string label_;
};

class CopyStats {
  public:
    CopyStats();
    std::atomic<std::uint64_t> refused_calls{0};
    std::atomic<std::uint64_t> registrations{0}, registered_bytes{0}, registration_ns{0};
    std::atomic<std::uint64_t> unregistrations{0}, unregistered_bytes{0}, unregistration_ns{0};

    std::atomic<int> slow_path{XFER_SLOW_PATH_ALLOW};

    // The observer: nullptr, or a slot kept until the context goes (a call may still be
    // reading one that was replaced).
    const ObserverSlot *observer() const noexcept { return observer_.load(std::memory_order_acquire); }
    void set_observer(xfer_copy_observer_fn fn, void *user_data);
    // Where the copy log goes (log_file) and how its lines name the context; at xfer_open.
    void configure_log(std::string path, std::string label);
    // The copy log (XFER_LOG = copies, slow_path = warn), opened on first need. Throws
    // Error(XFER_ERROR_CONFIG) when its file cannot be opened.
    CopyLog &ensure_log();
    // Installs the copy log as the observer (XFER_LOG = copies).
    void observe_with_log() { set_observer(&CopyLog::observer, &ensure_log()); }
    CopyLog *log() const noexcept { return log_.load(std::memory_order_acquire); }

    // The calling thread's counters on this context (made on its first copy here). Counters
    // that could not be made (out of memory) are the shared ones, added to atomically.
    CallCounters &mine() noexcept;
    bool shared(const CallCounters &c) const noexcept { return &c == &shared_; }

    void fill(xfer_context_stats *out) noexcept;
    void reset() noexcept;

  private:
    // The counters a thread used last, by context (ids are never reused, so an entry of a closed
    // context never matches again).
    struct Slot {
        std::uint64_t owner = 0;
        CallCounters *counters = nullptr;
    };
    static constexpr int kSlots = 4;
    static thread_local Slot t_slots[kSlots];
    static thread_local unsigned t_next_slot;

    CallCounters &mine_slow() noexcept;
    CallTotals totals_locked() const noexcept; // under threads_mutex_

    const std::uint64_t id_;
    std::mutex threads_mutex_;
    std::vector<std::pair<std::thread::id, std::unique_ptr<CallCounters>>> threads_; // under threads_mutex_
    CallCounters shared_;
    CallTotals baseline_; // what reset() saw, under threads_mutex_

    std::atomic<const ObserverSlot *> observer_{nullptr};
    std::mutex slots_mutex_;
    std::vector<std::unique_ptr<ObserverSlot>> slots_;
    std::atomic<CopyLog *> log_{nullptr};
    std::unique_ptr<CopyLog> log_owner_; // under slots_mutex_
    std::string log_path_, log_label_;   // set at xfer_open, before any other thread sees the context
};

// One copy entry's scope, on its caller's stack: made after the arguments were checked and the
// objects entered, before the backend is called; done() after the backend queued the copy.
// Without done() (a failure) nothing is counted except a slow-path refusal.
class CopyCall {
  public:
    CopyCall(const CopyContext &ctx, const char *function, xfer_copy_kind kind, std::uint64_t bytes,
             std::uint64_t copies, xfer_stream stream) noexcept;
    ~CopyCall();
    CopyCall(const CopyCall &) = delete;
    CopyCall &operator=(const CopyCall &) = delete;

    // Counts the notes (bytes nobody noted: XFER_PATH_UNREPORTED) and reports them.
    void done() noexcept;

    // The core's take_path, note_registration and path_refused services (xfer_backend.h).
    static xfer_status take_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t copies,
                                 std::uint64_t bytes, std::uint64_t largest_piece) noexcept;
    static void note_registration(int unlocked, std::uint64_t bytes, std::uint64_t ns) noexcept;
    static int path_refused(xfer_copy_path path, xfer_path_reason reason, std::uint64_t largest_piece) noexcept;

  private:
    struct Note {
        xfer_copy_path path;
        xfer_path_reason reason;
        bool slow;
        std::uint64_t copies, bytes;
    };
    static constexpr int kNotes = 16;

    void add(xfer_copy_path path, xfer_path_reason reason, bool slow, std::uint64_t copies,
             std::uint64_t bytes) noexcept;
    void report(const ObserverSlot &slot, std::uint64_t elapsed_ticks) noexcept;
    void warn(std::uint64_t elapsed_ticks) noexcept;

    CopyContext ctx_;
    CopyStats &stats_;
    const char *function_;
    xfer_copy_kind kind_;
    std::uint64_t bytes_, copies_;
    xfer_stream stream_;
    int policy_;
    bool refused_ = false, done_ = false;
    int count_ = 0;
    Note notes_[kNotes];
    CopyCall *outer_;
    CopyStats *outer_registrations_;
    std::uint64_t start_;
    NvtxCallRange nvtx_;
};

// The registration scope of xfer_register / xfer_unregister: note_registration counts into
// ctx's statistics while it lives.
class RegistrationCall {
  public:
    explicit RegistrationCall(CopyStats &stats) noexcept;
    ~RegistrationCall();
    RegistrationCall(const RegistrationCall &) = delete;
    RegistrationCall &operator=(const RegistrationCall &) = delete;

  private:
    CopyStats *outer_;
};

// The direction of a buffer copy as a copy kind.
inline xfer_copy_kind kind_of(xfer_direction dir) noexcept {
    return dir == XFER_TO_DEVICE ? XFER_COPY_HOST_TO_DEVICE : XFER_COPY_DEVICE_TO_HOST;
}

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
#include "copy_paths.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "error.hpp"
#include "last_error.hpp"

namespace xfer::core {
namespace {

// The copy entry running on this thread (its notes), and the statistics registrations go to
// (initial-exec, as CopyStats::t_slots).
__attribute__((tls_model("initial-exec"))) thread_local CopyCall *t_call = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local CopyStats *t_registrations = nullptr;

const char *kind_name(xfer_copy_kind kind) noexcept {
    switch (kind) {
    case XFER_COPY_HOST_TO_HOST:
        return "h2h";
    case XFER_COPY_HOST_TO_DEVICE:
        return "h2d";
    case XFER_COPY_DEVICE_TO_HOST:
        return "d2h";
    case XFER_COPY_DEVICE_TO_DEVICE:
        return "d2d";
    default:
        return "default";
    }
}

// Why a path was taken, as the refusal and the log say it.
const char *reason_text(xfer_path_reason reason) noexcept {
    switch (reason) {
    case XFER_REASON_MEMORY:
        return "the path of this memory";
    case XFER_REASON_BELOW_CROSSOVER:
        return "smaller than the size from which a faster path is measured";
    case XFER_REASON_NO_FASTER_PATH:
        return "this backend has no faster path for this memory (register it, or use the pageable or pinned backend)";
    case XFER_REASON_FIRST_USE:
        return "the first copy of this range: the registration cache page-locks it now";
    case XFER_REASON_CACHE_HIT:
        return "a range already in the registration cache";
    case XFER_REASON_CACHE_FULL:
        return "page-locking the range would exceed pin_limit (or RLIMIT_MEMLOCK)";
    case XFER_REASON_REGISTRATION_FAILED:
        return "cudaHostRegister refused the range";
    case XFER_REASON_CONFIGURED:
        return "a backend parameter chose this path";
    case XFER_REASON_SPLIT:
        return "the copy runs past the end of a registration made elsewhere";
    case XFER_REASON_ONE_OFF:
        return "by this machine's calibration the fastest way that page-locks nothing (the range was not copied "
               "often enough for a registration to pay back)";
    case XFER_REASON_REUSE:
        return "the range is copied again and, by the calibration, its registration pays back";
    case XFER_REASON_MEASURED_FASTEST:
        return "by the calibration, page-locking the range and copying it as DMA is the fastest way even for one copy";
    default:
        return "no reason given";
    }
}

void add_relaxed(std::atomic<std::uint64_t> &a, std::uint64_t v) noexcept {
    if (v != 0) a.fetch_add(v, std::memory_order_relaxed);
}

// Adds to a counter of CallCounters: this thread's own (only it writes them, so a load and a
// store, no locked instruction), or the shared ones (atomically).
void add_own(std::atomic<std::uint64_t> &a, std::uint64_t v, bool shared) noexcept {
    if (shared) {
        add_relaxed(a, v);
    } else {
        a.store(a.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
    }
}

} // namespace

// ------------------------------------------------------------------------- CopyLog

CopyLog::CopyLog(const std::string &path, std::string label) : file_(stderr), owned_(false), label_(std::move(label)) {
    if (path.empty() || path == "-") return;
    file_ = std::fopen(path.c_str(), "a");
    if (file_ == nullptr) {
        raise(XFER_ERROR_CONFIG, "xfer_open: the copy log ", path,
              " (XFER_LOG_FILE, config key log_file) cannot be opened for appending: ", std::strerror(errno));
    }
    owned_ = true;
}

CopyLog::~CopyLog() {
    if (owned_) std::fclose(file_);
}

void CopyLog::write(const xfer_copy_record &r) noexcept {
    // One fprintf per record: stdio locks the stream for the call, so lines never interleave.
    std::fprintf(file_, "xfer: copy %s %s %s path=%s reason=%s copies=%llu bytes=%llu host_us=%.3f%s\n", label_.c_str(),
                 r.function, kind_name(r.kind), xfer_copy_path_name(r.path), xfer_path_reason_name(r.reason),
                 static_cast<unsigned long long>(r.copies), static_cast<unsigned long long>(r.bytes),
                 static_cast<double>(r.host_ns) / 1000.0, r.slow != 0 ? " slow" : "");
    std::fflush(file_);
}

void CopyLog::observer(const xfer_copy_record *record, void *log) noexcept {
    static_cast<CopyLog *>(log)->write(*record);
}

void CopyLog::slow_observer(const xfer_copy_record *record, void *log) noexcept {
    if (record->slow != 0) static_cast<CopyLog *>(log)->write(*record);
}

// ----------------------------------------------------------------------- CopyStats

void CopyStats::set_observer(xfer_copy_observer_fn fn, void *user_data) {
    if (fn == nullptr) {
        observer_.store(nullptr, std::memory_order_release);
        return;
    }
    auto slot = std::make_unique<ObserverSlot>(ObserverSlot{fn, user_data});
    std::lock_guard<std::mutex> lock(slots_mutex_);
    slots_.push_back(std::move(slot));
    observer_.store(slots_.back().get(), std::memory_order_release);
}

void CopyStats::configure_log(std::string path, std::string label) {
    log_path_ = std::move(path);
    log_label_ = std::move(label);
}

CopyLog &CopyStats::ensure_log() {
    std::lock_guard<std::mutex> lock(slots_mutex_);
    if (!log_owner_) {
        log_owner_ = std::make_unique<CopyLog>(log_path_, log_label_);
        log_.store(log_owner_.get(), std::memory_order_release);
    }
    return *log_owner_;
}

// ---------------------------------------------------------------------- CopyStats

namespace {
std::atomic<std::uint64_t> g_next_stats_id{1};
} // namespace

// Initial-exec: the thread pointer plus an offset, no __tls_get_addr call per copy (a few
// bytes of the static TLS block, which a dlopen'ed libxfer.so may take).
__attribute__((tls_model("initial-exec"))) thread_local CopyStats::Slot CopyStats::t_slots[CopyStats::kSlots];
__attribute__((tls_model("initial-exec"))) thread_local unsigned CopyStats::t_next_slot = 0;

CopyStats::CopyStats() : id_(g_next_stats_id.fetch_add(1, std::memory_order_relaxed)) {}

CallCounters &CopyStats::mine() noexcept {
    for (const Slot &slot : t_slots) {
        if (slot.owner == id_) return *slot.counters;
    }
    return mine_slow();
}

CallCounters &CopyStats::mine_slow() noexcept {
    CallCounters *counters = &shared_;
    try {
        const std::thread::id me = std::this_thread::get_id();
        std::lock_guard<std::mutex> lock(threads_mutex_);
        counters = nullptr;
        for (auto &[thread, c] : threads_) {
            if (thread == me) counters = c.get(); // a thread back after using more than kSlots contexts
        }
        if (counters == nullptr) {
            threads_.emplace_back(me, std::make_unique<CallCounters>());
            counters = threads_.back().second.get();
        }
    } catch (...) { // out of memory (or a mutex that failed): the shared counters
        return shared_;
    }
    t_slots[t_next_slot++ % kSlots] = Slot{id_, counters};
    return *counters;
}

CallTotals CopyStats::totals_locked() const noexcept {
    CallTotals t;
    const auto add = [&t](const CallCounters &c) {
        for (int p = 0; p < XFER_PATH_COUNT; ++p) {
            t.copies[p] += c.paths[p].copies.load(std::memory_order_relaxed);
            t.bytes[p] += c.paths[p].bytes.load(std::memory_order_relaxed);
            t.ticks[p] += c.paths[p].ticks.load(std::memory_order_relaxed);
        }
        t.calls += c.calls.load(std::memory_order_relaxed);
        t.slow_copies += c.slow_copies.load(std::memory_order_relaxed);
    };
    add(shared_);
    for (const auto &entry : threads_) add(*entry.second);
    return t;
}

void CopyStats::fill(xfer_context_stats *out) noexcept {
    // Only the fields that fit the caller's struct (struct_size), and paths the library knows.
    xfer_context_stats s{};
    s.struct_size = out->struct_size;
    s.version = XFER_CONTEXT_STATS_VERSION;
    const std::size_t paths_at = offsetof(xfer_context_stats, paths);
    const std::size_t fit = out->struct_size <= paths_at ? 0 : (out->struct_size - paths_at) / sizeof(xfer_path_stats);
    constexpr std::size_t kPaths = XFER_PATH_COUNT;
    s.path_count = static_cast<std::uint32_t>(fit < kPaths ? fit : kPaths);
    CallTotals t;
    {
        std::lock_guard<std::mutex> lock(threads_mutex_);
        t = totals_locked();
        // Counters only grow: what reset() saw is at most what is read now.
        for (int p = 0; p < XFER_PATH_COUNT; ++p) {
            t.copies[p] -= baseline_.copies[p];
            t.bytes[p] -= baseline_.bytes[p];
            t.ticks[p] -= baseline_.ticks[p];
        }
        t.calls -= baseline_.calls;
        t.slow_copies -= baseline_.slow_copies;
    }
    s.calls = t.calls;
    s.slow_copies = t.slow_copies;
    s.refused_calls = refused_calls.load(std::memory_order_relaxed);
    s.registrations = registrations.load(std::memory_order_relaxed);
    s.registered_bytes = registered_bytes.load(std::memory_order_relaxed);
    s.registration_ns = registration_ns.load(std::memory_order_relaxed);
    s.unregistrations = unregistrations.load(std::memory_order_relaxed);
    s.unregistered_bytes = unregistered_bytes.load(std::memory_order_relaxed);
    s.unregistration_ns = unregistration_ns.load(std::memory_order_relaxed);
    for (std::uint32_t p = 0; p < s.path_count; ++p) {
        s.paths[p].copies = t.copies[p];
        s.paths[p].bytes = t.bytes[p];
        s.paths[p].host_ns = host_clock::to_ns(t.ticks[p]);
    }
    std::memcpy(out, &s, out->struct_size < sizeof s ? out->struct_size : sizeof s);
}

void CopyStats::reset() noexcept {
    {
        // The per-thread counters are their threads' alone to write: reset remembers what they
        // hold, and fill() reports what was added since.
        std::lock_guard<std::mutex> lock(threads_mutex_);
        baseline_ = totals_locked();
    }
    for (auto *a : {&refused_calls, &registrations, &registered_bytes, &registration_ns, &unregistrations,
                    &unregistered_bytes, &unregistration_ns}) {
        a->store(0, std::memory_order_relaxed);
    }
}

// ------------------------------------------------------------------------ CopyCall

CopyCall::CopyCall(const CopyContext &ctx, const char *function, xfer_copy_kind kind, std::uint64_t bytes,
                   std::uint64_t copies, xfer_stream stream) noexcept
    : ctx_(ctx), stats_(ctx.stats), function_(function), kind_(kind), bytes_(bytes), copies_(copies), stream_(stream),
      policy_(ctx.stats.slow_path.load(std::memory_order_relaxed)), outer_(t_call),
      outer_registrations_(t_registrations), start_(host_clock::ticks()), nvtx_(function, bytes) {
    t_call = this;
    t_registrations = &stats_;
}

CopyCall::~CopyCall() {
    if (refused_ && !done_) stats_.refused_calls.fetch_add(1, std::memory_order_relaxed);
    t_call = outer_;
    t_registrations = outer_registrations_;
}

void CopyCall::add(xfer_copy_path path, xfer_path_reason reason, bool slow, std::uint64_t copies,
                   std::uint64_t bytes) noexcept {
    for (int i = 0; i < count_; ++i) {
        Note &n = notes_[i];
        if (n.path == path && n.reason == reason && n.slow == slow) {
            n.copies += copies;
            n.bytes += bytes;
            return;
        }
    }
    if (count_ == kNotes) { // more kinds of pieces than notes: the last note takes the rest
        notes_[kNotes - 1].copies += copies;
        notes_[kNotes - 1].bytes += bytes;
        return;
    }
    notes_[count_++] = Note{path, reason, slow, copies, bytes};
}

xfer_status CopyCall::take_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t copies, std::uint64_t bytes,
                                std::uint64_t largest_piece) noexcept {
    CopyCall *call = t_call;
    if (call == nullptr) return XFER_SUCCESS; // not inside a copy entry
    if (static_cast<unsigned>(path) >= XFER_PATH_COUNT) path = XFER_PATH_UNREPORTED;
    if (static_cast<unsigned>(reason) >= XFER_REASON_COUNT) reason = XFER_REASON_MEMORY;
    const bool slow = xfer_path_is_slow(path, reason, largest_piece) != 0;
    if (slow && call->policy_ == XFER_SLOW_PATH_REFUSE) {
        call->refused_ = true;
        set_last_error(msg(call->function_, ": refused (slow_path = refuse): ", bytes, " bytes (", copies,
                           copies == 1 ? " copy" : " copies", ") would take the slow path '", xfer_copy_path_name(path),
                           "' on backend '", call->ctx_.backend, "' because ", reason_text(reason),
                           "; nothing was queued"));
        return XFER_ERROR_SLOW_PATH;
    }
    call->add(path, reason, slow, copies, bytes);
    call->nvtx_.mark_path(path, bytes);
    return XFER_SUCCESS;
}

int CopyCall::path_refused(xfer_copy_path path, xfer_path_reason reason, std::uint64_t largest_piece) noexcept {
    const CopyCall *call = t_call;
    if (call == nullptr || call->policy_ != XFER_SLOW_PATH_REFUSE) return 0;
    if (static_cast<unsigned>(path) >= XFER_PATH_COUNT || static_cast<unsigned>(reason) >= XFER_REASON_COUNT) return 0;
    return xfer_path_is_slow(path, reason, largest_piece) != 0 ? 1 : 0;
}

void CopyCall::note_registration(int unlocked, std::uint64_t bytes, std::uint64_t ns) noexcept {
    CopyStats *s = t_registrations;
    if (s == nullptr) return;
    if (unlocked == 0) {
        s->registrations.fetch_add(1, std::memory_order_relaxed);
        add_relaxed(s->registered_bytes, bytes);
        add_relaxed(s->registration_ns, ns);
    } else {
        s->unregistrations.fetch_add(1, std::memory_order_relaxed);
        add_relaxed(s->unregistered_bytes, bytes);
        add_relaxed(s->unregistration_ns, ns);
    }
}

void CopyCall::done() noexcept {
    done_ = true;
    const std::uint64_t elapsed = host_clock::ticks() - start_;
    std::uint64_t noted = 0;
    for (int i = 0; i < count_; ++i) noted += notes_[i].bytes;
    if (noted < bytes_) { // bytes no note named: the backend does not report (an older plugin)
        add(XFER_PATH_UNREPORTED, XFER_REASON_MEMORY, false, count_ == 0 ? copies_ : 1, bytes_ - noted);
    }
    CallCounters &mine = stats_.mine();
    const bool shared = stats_.shared(mine);
    if (count_ == 1) { // the common case: the whole call on one path
        const Note &n = notes_[0];
        PathCounters &c = mine.paths[n.path];
        add_own(c.copies, n.copies, shared);
        add_own(c.bytes, n.bytes, shared);
        add_own(c.ticks, elapsed, shared);
        if (n.slow) add_own(mine.slow_copies, n.copies, shared);
    } else {
        const std::uint64_t total = noted > bytes_ ? noted : bytes_;
        for (int i = 0; i < count_; ++i) {
            const Note &n = notes_[i];
            PathCounters &c = mine.paths[n.path];
            add_own(c.copies, n.copies, shared);
            add_own(c.bytes, n.bytes, shared);
            add_own(c.ticks,
                    total == 0 ? 0
                               : static_cast<std::uint64_t>(static_cast<double>(elapsed) *
                                                            static_cast<double>(n.bytes) / static_cast<double>(total)),
                    shared);
            if (n.slow) add_own(mine.slow_copies, n.copies, shared);
        }
    }
    add_own(mine.calls, 1, shared);
    if (const ObserverSlot *slot = stats_.observer()) {
        report(*slot, elapsed);
    } else if (policy_ == XFER_SLOW_PATH_WARN) {
        warn(elapsed);
    }
}

void CopyCall::report(const ObserverSlot &slot, std::uint64_t elapsed) noexcept {
    // The observer may make copies of its own: they are calls of their own, not this one's.
    t_call = outer_;
    t_registrations = outer_registrations_;
    std::uint64_t total = 0;
    for (int i = 0; i < count_; ++i) total += notes_[i].bytes;
    for (int i = 0; i < count_; ++i) {
        const Note &n = notes_[i];
        xfer_copy_record r{};
        r.struct_size = sizeof r;
        r.ctx = reinterpret_cast<xfer_context>(ctx_.handle);
        r.stream = stream_;
        r.function = function_;
        r.path = n.path;
        r.reason = n.reason;
        r.kind = kind_;
        r.slow = n.slow ? 1 : 0;
        r.copies = n.copies;
        r.bytes = n.bytes;
        r.call_bytes = total;
        const double share = total == 0 ? 1.0 : static_cast<double>(n.bytes) / static_cast<double>(total);
        r.host_ns = host_clock::to_ns(static_cast<std::uint64_t>(static_cast<double>(elapsed) * share));
        slot.fn(&r, slot.user_data);
    }
}

void CopyCall::warn(std::uint64_t elapsed) noexcept {
    bool any_slow = false;
    for (int i = 0; i < count_; ++i) any_slow = any_slow || notes_[i].slow;
    CopyLog *log = stats_.log();
    if (!any_slow || log == nullptr) return;
    report(ObserverSlot{&CopyLog::slow_observer, log}, elapsed);
}

// ---------------------------------------------------------------- RegistrationCall

RegistrationCall::RegistrationCall(CopyStats &stats) noexcept : outer_(t_registrations) { t_registrations = &stats; }
RegistrationCall::~RegistrationCall() { t_registrations = outer_; }

} // namespace xfer::core

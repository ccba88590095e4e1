// SPDX-License-Identifier: Apache-2.0
#include "registration_cache.hpp"

#include <algorithm>

#include "page_frames.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda::user_memory {
namespace {

std::uintptr_t page_down(std::uintptr_t p) { return p / kPageBytes * kPageBytes; }
std::uintptr_t page_up(std::uintptr_t p) { return (p + kPageBytes - 1) / kPageBytes * kPageBytes; }

// True when the pages [lo, hi) of cached range `r` are still the ones it registered.
bool holds_its_pages(const CachedRange &r, std::uintptr_t lo, std::uintptr_t hi) {
    return same_page_frames(lo, (hi - lo) / kPageBytes, r.frames.data() + (lo - r.start) / kPageBytes);
}

xfer_status queue_dma(void *dst, const void *src, std::size_t bytes, cudaStream_t s, const char *what) noexcept {
    return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync(%zu bytes, %s)", bytes, what);
}

} // namespace

RegistrationCache::RegistrationCache(const Context &owner, std::size_t budget, const PolicySettings &policy) noexcept
    : owner_(owner), budget_(budget), policy_(policy), lru_(budget),
      // The reuse window: ranges copied within twice the budget. A range that more than that
      // many bytes of other ranges were copied after would have left the budget by then anyway.
      tracker_(budget > SIZE_MAX / 2 ? SIZE_MAX : 2 * budget) {}

RegistrationCache::~RegistrationCache() { (void)close(); }

Decision RegistrationCache::plan_untracked(std::size_t bytes, xfer_direction dir) const noexcept {
    const Decision d = decide(policy_, bytes, dir, 1, Registrable::yes);
    if (d.choice != Choice::register_now && !d.register_in_background) return d;
    // Only with pin_limit = 0 (may_take is true otherwise): nothing is page-locked.
    return Decision{unregistered_way(policy_, bytes, dir), XFER_REASON_CONFIGURED, false};
}

xfer_status RegistrationCache::close() noexcept {
    stop_registrar();
    return forget(nullptr, 0);
}

xfer_status RegistrationCache::evict_locked(std::uintptr_t start) noexcept {
    // A queued DMA may still use the pages: the device finishes first (evictions are rare and
    // cost a cudaHostUnregister of tens of milliseconds per GiB anyway).
    xfer_status st = check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before evicting a cached registration)");
    CachedRange r = lru_.take(start);
    ranges_.store(lru_.size(), std::memory_order_relaxed);
    ++evictions_;
    const plugin::HostTimer timer;
    const cudaError_t err = cudaHostUnregister(reinterpret_cast<void *>(r.start));
    plugin::note_registration(true, r.bytes, timer.ns());
    if (err == cudaErrorHostMemoryNotRegistered || err == cudaErrorInvalidValue) {
        // The application freed the range (which it may do at any time: it never handed it to
        // us): the driver may have dropped the registration with the mapping.
        (void)cudaGetLastError();
        return st;
    }
    return last_failure(st, check(err, "cudaHostUnregister(%zu bytes of the registration cache)", r.bytes));
}

bool RegistrationCache::make_room_locked(std::size_t bytes, xfer_status *st) noexcept {
    *st = XFER_SUCCESS;
    std::vector<std::uintptr_t> victims;
    if (bytes + pending_bytes_ > budget_ || !lru_.victims_for(bytes + pending_bytes_, &victims)) return false;
    for (std::uintptr_t start : victims) {
        if ((*st = evict_locked(start)) != XFER_SUCCESS) return false;
    }
    return true;
}

bool RegistrationCache::register_range(std::uintptr_t lo, std::uintptr_t hi, CachedRange *out) noexcept {
    void *p = reinterpret_cast<void *>(lo);
    const plugin::HostTimer timer;
    if (cudaHostRegister(p, hi - lo, cudaHostRegisterPortable | cudaHostRegisterMapped) != cudaSuccess) {
        (void)cudaGetLastError(); // not paid: the copy goes the unregistered way
        return false;
    }
    const std::uint64_t ns = timer.ns();
    out->start = lo;
    out->bytes = hi - lo;
    // Frames read after registering: every page is present and pinned now.
    if (!read_page_frames(lo, out->bytes / kPageBytes, &out->frames)) {
        (void)cudaHostUnregister(p);
        (void)cudaGetLastError();
        return false;
    }
    out->register_ns = ns;
    return true;
}

bool RegistrationCache::drop_stale(const void *ptr, std::size_t bytes, bool prove_pages) noexcept {
    if (!may_hold_ranges()) return false;
    bool dropped = false;
    try {
        const auto p = reinterpret_cast<std::uintptr_t>(ptr);
        const std::uintptr_t lo = page_down(p);
        const std::uintptr_t hi = page_up(p + bytes);
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::uintptr_t start : lru_.overlapping(lo, hi - lo)) {
            const CachedRange *r = lru_.find(start, 1);
            // A copy that starts inside a registration and runs past its end (or the reverse)
            // is refused by the driver with cudaErrorInvalidValue: the range goes.
            const bool straddled = lo < r->start || hi > r->start + r->bytes;
            if (straddled || (prove_pages && !holds_its_pages(*r, lo, hi))) {
                (void)evict_locked(start);
                dropped = true;
            }
        }
        ranges_.store(lru_.size(), std::memory_order_relaxed);
    } catch (const std::bad_alloc &) {}
    return dropped;
}

Registrable RegistrationCache::registrable_locked(std::size_t bytes, RangeState state) const noexcept {
    if (bytes > budget_) return Registrable::over_limit;
    if (state == RangeState::refused || !page_frames_readable()) return Registrable::refused;
    return Registrable::yes;
}

xfer_status RegistrationCache::copy_hit_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes,
                                               Proof proof, std::uintptr_t lo, std::uintptr_t hi, cudaStream_t s,
                                               bool *taken) noexcept {
    *taken = true;
    if (auto st = plugin::take_path(XFER_PATH_CACHED_REGISTRATION, XFER_REASON_CACHE_HIT, bytes)) {
        return st; // refused: nothing queued, the caller returns the refusal
    }
    ++hits_;
    lru_.touch(*r);
    // Queued under the lock: an eviction (which waits for the device) cannot come between the
    // check and the copy.
    if (proof == Proof::before_each_piece) return copy_hit_to_host_locked(r, dst, src, bytes, s);
    if (auto st = queue_dma(dst, src, bytes, s, "registered by the registration cache")) return st;
    if (proof == Proof::trusted || holds_its_pages(*r, lo, hi)) return XFER_SUCCESS; // the very pages the copy touches
    // To the device, the pages changed since registering (header): the DMA queued above read the
    // old, still pinned ones; the device finishes it, the range goes, the copy runs again.
    return requeue_stale_locked(r, dst, src, bytes, s,
                                "again after evicting a cached registration whose pages changed");
}

xfer_status RegistrationCache::requeue_stale_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes,
                                                    cudaStream_t s, const char *what) noexcept {
    --hits_;
    ++misses_;
    if (auto st = evict_locked(r->start)) return st;
    return queue_dma(dst, src, bytes, s, what); // unregistered now: the driver's way
}

xfer_status RegistrationCache::copy_hit_to_host_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes,
                                                       cudaStream_t s) noexcept {
    // A DMA that writes host memory never starts on pages not proven (header). Comparing the
    // frames costs about 20 ns a page (a millisecond per 256 MiB), which before the whole copy
    // would delay all of it. In pieces of kProofPiece, each piece's pages are compared just
    // before its DMA is queued, the next piece's while the device copies this one: only the
    // first piece's comparison comes before the copy.
    const auto host = reinterpret_cast<std::uintptr_t>(dst);
    auto *to = static_cast<unsigned char *>(dst);
    const auto *from = static_cast<const unsigned char *>(src);
    for (std::size_t done = 0; done < bytes;) {
        const std::uintptr_t at = host + done;
        const std::uintptr_t end = std::min<std::uintptr_t>(host + bytes, page_down(at + kProofPiece));
        if (!holds_its_pages(*r, page_down(at), page_up(end))) {
            // The pieces queued before went to proven pages; the range goes (the device finishes
            // them first) and the rest of the copy goes the driver's way.
            return requeue_stale_locked(r, to + done, from + done, bytes - done, s,
                                        "the rest of a copy after evicting a cached registration whose pages changed");
        }
        if (auto st = queue_dma(to + done, from + done, end - at, s, "registered by the registration cache")) {
            if (done != 0) {
                (void)cudaStreamSynchronize(s); // the pieces already queued finish first
                (void)cudaGetLastError();
            }
            return st;
        }
        done += end - at;
    }
    return XFER_SUCCESS;
}

xfer_status RegistrationCache::copy(void *dst, const void *src, std::size_t bytes, xfer_direction dir, bool host_pinned,
                                    bool pages_proven, cudaStream_t s, Decision *plan, bool *taken) noexcept {
    *taken = false;
    const Choice unregistered = unregistered_way(policy_, bytes, dir);
    if (budget_ == 0) {
        *plan = plan_untracked(bytes, dir);
        return XFER_SUCCESS;
    }
    const auto host = reinterpret_cast<std::uintptr_t>(dir == XFER_TO_DEVICE ? src : dst);
    const std::uintptr_t lo = page_down(host);
    const std::uintptr_t hi = page_up(host + bytes);
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        report_background_registrations();
        CachedRange *r = lru_.find(lo, hi - lo);
        // Unproven pages are compared after the DMA to the device, before each piece's to the host (header).
        const Proof proof = pages_proven            ? Proof::trusted
                            : dir == XFER_TO_DEVICE ? Proof::after_dma
                                                    : Proof::before_each_piece;
        if (r != nullptr) return copy_hit_locked(r, dst, src, bytes, proof, lo, hi, s, taken);
        if (host_pinned && lru_.overlapping(lo, hi - lo).empty()) {
            *plan = Decision{}; // page-locked by cudaHostAlloc or xfer_register: not ours
            return XFER_SUCCESS;
        }
        ++misses_;
        // A buffer's view needs no frame to tell its range from other memory at the same address.
        std::vector<std::uint64_t> first_frame;
        const ReuseTracker::Seen seen =
            tracker_.note(lo, hi - lo, !pages_proven && read_page_frames(lo, 1, &first_frame) ? first_frame[0] : 0);
        *plan = decide(policy_, bytes, dir, seen.copies, registrable_locked(hi - lo, seen.state), pages_proven);
        if (plan->register_in_background) {
            if (seen.state != RangeState::pending) {
                tracker_.mark(lo, hi - lo, RangeState::pending);
                ask_background(lo, hi);
            }
            return XFER_SUCCESS;
        }
        if (plan->choice != Choice::register_now) return XFER_SUCCESS;

        // A copy the slow-path policy refuses leaves the cache as it was: asked before any range
        // is evicted or page-locked (take_path then makes the refusal and its message).
        if (plugin::path_refused(XFER_PATH_NEW_REGISTRATION, plan->reason, bytes)) {
            *taken = true;
            return plugin::take_path(XFER_PATH_NEW_REGISTRATION, plan->reason, bytes);
        }
        // No cached range contains the copy; one that overlaps it (registered by another thread
        // since the caller's drop_stale) goes: the copy would straddle it, and the driver refuses
        // overlapping registrations.
        for (std::uintptr_t start : lru_.overlapping(lo, hi - lo)) {
            if (auto st = evict_locked(start)) return st;
        }
        ranges_.store(lru_.size(), std::memory_order_relaxed);
        xfer_status st = XFER_SUCCESS;
        CachedRange range;
        if (!make_room_locked(hi - lo, &st)) {
            if (st != XFER_SUCCESS) return st;
            *plan = Decision{unregistered, XFER_REASON_CACHE_FULL, false};
            return XFER_SUCCESS;
        }
        if (!register_range(lo, hi, &range)) {
            tracker_.mark(lo, hi - lo, RangeState::refused);
            *plan = Decision{unregistered, XFER_REASON_REGISTRATION_FAILED, false};
            return XFER_SUCCESS;
        }
        plugin::note_registration(false, range.bytes, range.register_ns);
        tracker_.forget(lo, hi - lo);
        lru_.insert(std::move(range));
        ranges_.store(lru_.size(), std::memory_order_relaxed);
        *taken = true;
        // Taken once the registration held (a refused one goes the unregistered way, counted
        // there); the call's policy let it through above.
        if (auto st2 = plugin::take_path(XFER_PATH_NEW_REGISTRATION, plan->reason, bytes)) return st2;
        return queue_dma(dst, src, bytes, s, "registered by the registration cache");
    } catch (const std::bad_alloc &) {
        *plan = Decision{unregistered, XFER_REASON_NO_FASTER_PATH, false}; // bookkeeping failed, nothing queued
        return XFER_SUCCESS;
    }
}

xfer_status RegistrationCache::forget(const void *ptr, std::size_t bytes) noexcept {
    try {
        std::unique_lock<std::mutex> lock(mutex_);
        // A range being page-locked in the background is waited for: once this returns, nothing
        // of [ptr, ptr + bytes) stays page-locked by the cache.
        registrar_idle_.wait(lock, [&] { return !registering_; });
        const auto p = reinterpret_cast<std::uintptr_t>(ptr);
        const std::uintptr_t lo = ptr == nullptr ? 0 : page_down(p);
        const std::uintptr_t hi = ptr == nullptr ? UINTPTR_MAX : page_up(p + bytes);
        const auto starts = ptr == nullptr ? lru_.all() : lru_.overlapping(lo, hi - lo);
        xfer_status st = XFER_SUCCESS;
        for (std::uintptr_t start : starts) st = last_failure(st, evict_locked(start));
        tracker_.forget(lo, hi - lo);
        requests_.erase(std::remove_if(requests_.begin(), requests_.end(),
                                       [&](const Request &q) {
                                           const bool gone = q.lo < hi && lo < q.hi;
                                           if (gone) pending_bytes_ -= q.hi - q.lo;
                                           return gone;
                                       }),
                        requests_.end());
        return st;
    } catch (const std::bad_alloc &) {
        return XFER_ERROR_OUT_OF_MEMORY;
    }
}

bool RegistrationCache::holds(const void *ptr) noexcept {
    if (!may_hold_ranges()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.find(page_down(reinterpret_cast<std::uintptr_t>(ptr)), 1) != nullptr;
}

bool RegistrationCache::holds_any(const void *ptr, std::size_t bytes) noexcept {
    if (ptr == nullptr) return false;
    // Under the lock whatever may_hold_ranges says: a background registration asked for or in
    // flight is no cached range yet (called where memory is released, never per copy).
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uintptr_t lo = page_down(reinterpret_cast<std::uintptr_t>(ptr));
    const std::uintptr_t hi = page_up(reinterpret_cast<std::uintptr_t>(ptr) + bytes);
    const auto overlaps = [&](const Request &q) { return q.lo < hi && lo < q.hi; };
    if (registering_ && overlaps(registering_range_)) return true;
    if (std::any_of(requests_.begin(), requests_.end(), overlaps)) return true;
    try {
        return !lru_.overlapping(lo, hi - lo).empty();
    } catch (const std::bad_alloc &) {
        return true; // forget() then looks again
    }
}

void RegistrationCache::stats(xfer_registration_stats *out) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    out->cache_hits = hits_;
    out->cache_misses = misses_;
    out->cache_evictions = evictions_;
    out->cache_ranges = lru_.size();
    out->cache_bytes = lru_.bytes();
    out->cache_limit_bytes = lru_.limit();
}

void RegistrationCache::report_background_registrations() noexcept {
    if (unreported_registrations_ == 0) return;
    // One note per registration keeps the count exact; the bytes and time go with the last.
    for (std::uint64_t i = 1; i < unreported_registrations_; ++i) plugin::note_registration(false, 0, 0);
    plugin::note_registration(false, unreported_bytes_, unreported_ns_);
    unreported_registrations_ = unreported_bytes_ = unreported_ns_ = 0;
}

} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
#include "registration_cache.hpp"

#include <algorithm>

#include "page_frames.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda::pinned {
namespace {

std::uintptr_t page_down(std::uintptr_t p) { return p / kPageBytes * kPageBytes; }
std::uintptr_t page_up(std::uintptr_t p) { return (p + kPageBytes - 1) / kPageBytes * kPageBytes; }

// True when the pages [lo, hi) of cached range `r` are still the ones it registered.
bool holds_its_pages(const CachedRange &r, std::uintptr_t lo, std::uintptr_t hi) {
    return same_page_frames(lo, (hi - lo) / kPageBytes, r.frames.data() + (lo - r.start) / kPageBytes);
}

// Why this thread's last copy offered to a cache was left to the driver (see last_decline).
thread_local xfer_path_reason t_decline = XFER_REASON_NO_FASTER_PATH;

xfer_status decline(xfer_path_reason why) noexcept {
    t_decline = why;
    return XFER_SUCCESS;
}

} // namespace

xfer_path_reason RegistrationCache::last_decline() noexcept { return t_decline; }

RegistrationCache::~RegistrationCache() { (void)forget(nullptr, 0); }

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

bool RegistrationCache::drop_stale(const void *ptr, std::size_t bytes, bool prove_pages) noexcept {
    if (ranges_.load(std::memory_order_relaxed) == 0) {
        return false;
    }
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

xfer_status RegistrationCache::copy(void *dst, const void *src, std::size_t bytes, xfer_direction dir, bool host_pinned,
                                    bool pages_proven, cudaStream_t s, bool *taken) noexcept {
    *taken = false;
    if (lru_.limit() == 0) {
        return decline(XFER_REASON_CONFIGURED);
    }
    if (bytes < min_bytes_) {
        return decline(XFER_REASON_BELOW_CROSSOVER);
    }
    const auto host = reinterpret_cast<std::uintptr_t>(dir == XFER_TO_DEVICE ? src : dst);
    const std::uintptr_t lo = page_down(host);
    const std::uintptr_t hi = page_up(host + bytes);
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        CachedRange *r = lru_.find(lo, hi - lo);
        // Unproven pages are compared after the DMA only to the device (header), else before.
        const bool prove_after = !pages_proven && dir == XFER_TO_DEVICE;
        if (r != nullptr && !pages_proven && !prove_after && !holds_its_pages(*r, lo, hi)) {
            // A DMA that writes host memory never starts on pages not proven (header): the
            // stale range goes first and the copy continues as a miss.
            if (auto st = evict_locked(r->start)) {
                return st;
            }
            r = nullptr;
        }
        if (r != nullptr) {
            if (auto st = plugin::take_path(XFER_PATH_CACHED_REGISTRATION, XFER_REASON_CACHE_HIT, bytes)) {
                *taken = true; // refused: nothing queued, the caller returns the refusal
                return st;
            }
            ++hits_;
            lru_.touch(*r);
            *taken = true;
            // Queued under the lock: an eviction (which waits for the device) cannot come
            // between the check and the copy.
            if (auto st = check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s),
                                "cudaMemcpyAsync(%zu bytes, registered by the registration cache)", bytes)) {
                return st;
            }
            if (!prove_after || holds_its_pages(*r, lo, hi)) {
                return XFER_SUCCESS; // the range holds the very pages the copy touches
            }
            // To the device, the pages changed since registering (header): the DMA queued above
            // read the old, still pinned ones; the device finishes it, the range goes, the copy
            // runs again.
            --hits_;
            ++misses_;
            if (auto st = evict_locked(r->start)) {
                return st;
            }
            return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s),
                         "cudaMemcpyAsync(%zu bytes, again after evicting a cached registration whose pages changed)",
                         bytes);
        }
        if (host_pinned && lru_.overlapping(lo, hi - lo).empty()) {
            return XFER_SUCCESS; // page-locked by cudaHostAlloc or xfer_register: not ours
        }
        ++misses_;
        if (!page_frames_readable()) {
            return decline(XFER_REASON_REGISTRATION_FAILED); // the cache cannot prove its pages
        }
        if (hi - lo > lru_.limit()) {
            return decline(XFER_REASON_CACHE_FULL);
        }
        // A copy the slow-path policy refuses leaves the cache as it was: asked before any range
        // is evicted or locked (take_path then makes the refusal and its message).
        if (plugin::path_refused(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, bytes)) {
            *taken = true;
            return plugin::take_path(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, bytes);
        }
        // No cached range contains the copy; one that overlaps it (registered by another thread
        // since the caller's drop_stale) goes: the copy would straddle it, and the driver
        // refuses overlapping registrations.
        for (std::uintptr_t start : lru_.overlapping(lo, hi - lo)) {
            if (auto st = evict_locked(start)) {
                return st;
            }
        }
        ranges_.store(lru_.size(), std::memory_order_relaxed);

        std::vector<std::uintptr_t> victims;
        lru_.victims_for(hi - lo, &victims);
        for (std::uintptr_t start : victims) {
            if (auto st = evict_locked(start)) {
                return st;
            }
        }
        CachedRange range;
        range.start = lo;
        range.bytes = hi - lo;
        void *p = reinterpret_cast<void *>(range.start);
        const plugin::HostTimer timer;
        if (cudaHostRegister(p, range.bytes, cudaHostRegisterPortable | cudaHostRegisterMapped) != cudaSuccess) {
            (void)cudaGetLastError(); // not paid: the caller copies the uncached way
            return decline(XFER_REASON_REGISTRATION_FAILED);
        }
        plugin::note_registration(false, range.bytes, timer.ns());
        // Frames read after registering: every page is present and pinned now.
        if (!read_page_frames(range.start, range.bytes / kPageBytes, &range.frames)) {
            const plugin::HostTimer unlock_timer;
            (void)cudaHostUnregister(p);
            (void)cudaGetLastError();
            plugin::note_registration(true, range.bytes, unlock_timer.ns());
            return decline(XFER_REASON_REGISTRATION_FAILED);
        }
        lru_.insert(std::move(range));
        ranges_.store(lru_.size(), std::memory_order_relaxed);
        *taken = true;
        // Taken once the registration held (a failed one sends the copy to the driver, counted
        // there); the call's policy let it through above.
        if (auto st = plugin::take_path(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, bytes)) {
            return st;
        }
        return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s),
                     "cudaMemcpyAsync(%zu bytes, registered by the registration cache)", bytes);
    } catch (const std::bad_alloc &) {
        return decline(XFER_REASON_NO_FASTER_PATH); // bookkeeping failed before anything was queued
    }
}

xfer_status RegistrationCache::forget(const void *ptr, std::size_t bytes) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto starts = ptr == nullptr ? lru_.all()
                                           : lru_.overlapping(page_down(reinterpret_cast<std::uintptr_t>(ptr)),
                                                              page_up(reinterpret_cast<std::uintptr_t>(ptr) + bytes) -
                                                                  page_down(reinterpret_cast<std::uintptr_t>(ptr)));
        xfer_status st = XFER_SUCCESS;
        for (std::uintptr_t start : starts) {
            st = last_failure(st, evict_locked(start));
        }
        return st;
    } catch (const std::bad_alloc &) {
        return XFER_ERROR_OUT_OF_MEMORY;
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

} // namespace xfer::cuda::pinned

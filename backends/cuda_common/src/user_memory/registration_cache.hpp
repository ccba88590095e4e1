// SPDX-License-Identifier: Apache-2.0
// A context's registration cache: user (pageable) host ranges that xfer page-locked on its own
// (cudaHostRegister) so that their copies are DMAs, least recently used first out under the pin
// budget (pin_limit, and RLIMIT_MEMLOCK where it is set). Which copies page-lock a range, and
// when, is the copy policy's choice (copy_policy.hpp), from the copy's size, this machine's
// calibration and how often the range was copied (reuse_tracker.hpp); this class keeps the
// ranges, carries the choice out and proves that a cached range still maps its pages.
//
// Stale registrations. cudaHostRegister pins the *physical* pages that back the range when it
// is called. If the application frees the memory (munmap, or glibc trimming with
// madvise(MADV_DONTNEED)) and gets the same addresses again, the addresses now map other pages,
// while the driver still holds (and would DMA to or from) the old ones; the driver itself
// still answers "registered" for those addresses. A cache keyed on addresses alone would then
// copy stale bytes. Choice: every hit checks the identity of the pages the copy touches, the
// physical frame numbers from /proc/self/pagemap, against those recorded when the range was
// registered; any difference (or a page no longer present) evicts the range and registers it
// again. This is exact (no false hit whatever the allocator does), needs no hook into free or
// munmap (hooks miss frees done inside libc and cannot be installed from a plugin that is
// loaded late), and costs one pagemap read of 8 bytes per 4 KiB page on each hit (~1/500 of
// the bytes moved), done while the hit's DMA runs (copy()). Its limit: Linux shows frame
// numbers only to processes with CAP_SYS_ADMIN; without it the cache cannot prove a hit and
// page-locks nothing (every copy goes the unregistered way with XFER_REASON_REGISTRATION_FAILED),
// and xfer_register remains the way to page-lock memory whose lifetime the application manages.
//
// Registering in the background (a range copied again while a staging engine serves its copies):
// one thread per context page-locks the range off the copy path, so no copy waits for the
// registration; the copies after it are hits. Its registrations are counted in the context's
// statistics by the next copy call that consults the cache.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include <cuda_runtime_api.h>

#include "copy_policy.hpp"
#include "registration_lru.hpp"
#include "reuse_tracker.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda {
struct Context;
}

namespace xfer::cuda::user_memory {

class RegistrationCache {
  public:
    // `owner`: the context whose device the background registrations bind (it outlives the
    // cache). `budget`: bytes the cache may hold page-locked (0: nothing is ever page-locked).
    RegistrationCache(const Context &owner, std::size_t budget, const PolicySettings &policy) noexcept;
    ~RegistrationCache();
    RegistrationCache(const RegistrationCache &) = delete;
    RegistrationCache &operator=(const RegistrationCache &) = delete;

    // A copy of `bytes` between host memory and device memory: a hit is queued as DMA
    // (cudaMemcpyAsync on `s`) and sets *taken, and so does a miss the policy page-locks now.
    // Otherwise *taken stays false and *plan says how the caller copies it (the staging engine
    // or the driver) and why; a background registration may have been asked for meanwhile.
    // The context's device must be current; drop_stale(host side) must have run just before.
    // With `pages_proven` (an xfer buffer's host view: the pages are the range's own) a hit
    // trusts them, and a miss is decided as a buffer's (copy_policy.hpp);
    // without it a hit *to the device* queues its DMA first and compares the pages while it runs
    // (a stale range's old pages are still pinned, so that DMA read no one else's memory: the
    // device finishes it, the range goes and the copy is queued again, the driver's way); a hit
    // *to the host* goes in pieces, each piece's pages compared before its DMA is queued (old
    // pages may belong to another mapping now): where they changed, the pieces before finish,
    // the range goes and the rest of the copy is queued the driver's way.
    // `host_pinned`: the host side looked page-locked to the driver, which a cached range does
    // too; memory page-locked by others (no cached range overlaps it) is left alone, *plan
    // unset. Thread-safe.
    xfer_status copy(void *dst, const void *src, std::size_t bytes, xfer_direction dir, bool host_pinned,
                     bool pages_proven, cudaStream_t s, Decision *plan, bool *taken) noexcept;

    // How a copy that copy() cannot take (may_take false) goes: the policy's answer, with no
    // lock and no tracking; never a registration.
    Decision plan_untracked(std::size_t bytes, xfer_direction dir) const noexcept;
    // Whether copy() can take a copy of `bytes` (of an xfer buffer's host view: `buffer_view`):
    // below registration_min (buffer_registration_min) it never page-locks (unless `path` =
    // registered) and cached ranges are consulted only while there are some.
    bool may_take(std::size_t bytes, bool buffer_view = false) const noexcept {
        return budget_ > 0 &&
               (bytes >= smallest_registered(policy_, buffer_view) || policy_.path == PathOverride::registered);
    }

    // Makes [ptr, ptr + bytes) safe to hand to the driver: evicts the cached ranges it overlaps
    // whose pages changed and those it straddles (the driver refuses a copy that crosses a
    // registration's end). `prove_pages` false: only the straddled ones go. True when a range
    // went. Cheap when the cache holds nothing.
    bool drop_stale(const void *ptr, std::size_t bytes, bool prove_pages = true) noexcept;
    // Unregisters cached ranges overlapping [ptr, ptr + bytes) (every range with ptr nullptr),
    // after the device's queued work, and forgets their reuse; waits for the background
    // registrar to finish the range it is page-locking first.
    xfer_status forget(const void *ptr, std::size_t bytes) noexcept;
    // Whether a cached range holds the page of `ptr`. Whether one overlaps [ptr, ptr + bytes), or
    // the background registrar was asked for or is page-locking one that does: memory about to be
    // released must then go through forget() first (else the registrar could page-lock it after
    // the release, under memory that is someone else's by then).
    bool holds(const void *ptr) noexcept;
    bool holds_any(const void *ptr, std::size_t bytes) noexcept;
    void stats(xfer_registration_stats *out) noexcept;
    // Stops the background registrar and unregisters everything (context close).
    xfer_status close() noexcept;

    // Count of cached ranges, readable without the lock: copies skip drop_stale while it is 0.
    bool may_hold_ranges() const noexcept { return ranges_.load(std::memory_order_relaxed) != 0; }
    const PolicySettings &policy() const noexcept { return policy_; }
    std::size_t budget() const noexcept { return budget_; }

  private:
    xfer_status evict_locked(std::uintptr_t start) noexcept; // waits for the device first
    // Evicts the least recently used ranges until `bytes` more fit; false when they never can.
    bool make_room_locked(std::size_t bytes, xfer_status *st) noexcept;
    // cudaHostRegister of [lo, hi) and its page frames; false (nothing held) when refused.
    bool register_range(std::uintptr_t lo, std::uintptr_t hi, CachedRange *out) noexcept;
    Registrable registrable_locked(std::size_t bytes, RangeState state) const noexcept;
    // How a hit knows the range still maps the pages it registered.
    enum class Proof {
        trusted,          // the caller knows (a buffer's own host view)
        after_dma,        // to the device: compared while the DMA runs
        before_each_piece // to the host: each piece compared before its DMA
    };
    // Pieces of a copy to the host whose pages are compared before their DMA: 8 MiB, about
    // 150 us of DMA to hide the next piece's comparison (about 40 us) behind.
    static constexpr std::size_t kProofPiece = std::size_t{8} << 20;
    xfer_status copy_hit_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes, Proof proof,
                                std::uintptr_t lo, std::uintptr_t hi, cudaStream_t s, bool *taken) noexcept;
    xfer_status copy_hit_to_host_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes,
                                        cudaStream_t s) noexcept;
    // A hit whose pages changed: counted a miss, the range evicted (after the device finished what
    // was queued) and [dst, dst + bytes) queued again, now through the driver.
    xfer_status requeue_stale_locked(CachedRange *r, void *dst, const void *src, std::size_t bytes, cudaStream_t s,
                                     const char *what) noexcept;
    void report_background_registrations() noexcept;

    // The background registrar (background_registrar.cpp).
    void ask_background(std::uintptr_t lo, std::uintptr_t hi) noexcept; // with mutex_ held
    void registrar_loop() noexcept;
    void stop_registrar() noexcept;

    const Context &owner_;
    const std::size_t budget_;
    const PolicySettings policy_;

    std::mutex mutex_;
    std::atomic<std::size_t> ranges_{0}; // lru_.size(), readable without the lock
    RegistrationLru lru_;
    ReuseTracker tracker_;
    std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;

    // Background requests and the registrar's state, under mutex_.
    struct Request {
        std::uintptr_t lo = 0, hi = 0;
    };
    std::deque<Request> requests_;
    std::size_t pending_bytes_ = 0; // asked for or being registered: counted against the budget
    bool registering_ = false;      // the registrar is inside cudaHostRegister (mutex_ released)
    Request registering_range_;     // the range it is page-locking while registering_
    bool stopping_ = false;
    std::condition_variable registrar_wake_, registrar_idle_;
    std::thread registrar_;
    // Background registrations not yet told to the core (note_registration works inside an entry).
    std::uint64_t unreported_registrations_ = 0, unreported_bytes_ = 0, unreported_ns_ = 0;
};

} // namespace xfer::cuda::user_memory

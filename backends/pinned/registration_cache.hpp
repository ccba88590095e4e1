// SPDX-License-Identifier: Apache-2.0
// The pinned backend's automatic registration cache: xfer_memcpy_async between unregistered
// (pageable) user memory and device memory page-locks the user's range once
// (cudaHostRegister) and then copies it as DMA, at page-locked speed, truly asynchronously.
// Later copies inside a cached range are hits; least-recently-used ranges are unregistered to
// stay under the byte limit.
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
// the bytes moved), done while the hit's DMA runs (copy()). Its limit: Linux shows frame numbers only to processes with
// CAP_SYS_ADMIN; without it the cache cannot prove a hit and stays off (every copy is a miss
// and goes the uncached way; stats show cache_misses growing and cache_ranges 0), and
// xfer_register remains the way to register memory whose lifetime the application manages.
//
// A copy the cache does not take (range below registration_min or above the limit, frame
// numbers unreadable, cudaHostRegister refused: RLIMIT_MEMLOCK, memory already registered) is
// left to the caller, which copies it the uncached way (*taken = false).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include <cuda_runtime_api.h>

#include "registration_lru.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::pinned {

class RegistrationCache {
  public:
    // Why this thread's last copy that the cache did not take goes to the driver (the reason
    // of its DRIVER_PAGEABLE path).
    static xfer_path_reason last_decline() noexcept;
    RegistrationCache(std::size_t limit, std::size_t min_bytes) noexcept : lru_(limit), min_bytes_(min_bytes) {}
    ~RegistrationCache();
    RegistrationCache(const RegistrationCache &) = delete;
    RegistrationCache &operator=(const RegistrationCache &) = delete;

    // Copies `bytes` between pageable host memory and device memory through a cached
    // registration of the host side (registered now on a miss) with cudaMemcpyAsync on `s`, and
    // sets *taken; or leaves it to the caller (*taken false, XFER_SUCCESS). The context's
    // device must be current; drop_stale(host side) must have run just before. With
    // `pages_proven` (drop_stale compared the pages) a hit trusts that check; without it
    // (drop_stale with prove_pages false) a hit *to the device* queues its DMA first and
    // compares the pages while the DMA runs, so the copy does not wait for the pagemap read
    // (0.8-1.4 ms per 256 MiB on the H200: 0.85x a cudaHostAlloc buffer's speed). Pages found
    // changed: that DMA read the range's old pages, which the registration still pins (no
    // byte of anyone's memory is touched), so the device finishes it, the range is evicted and
    // the copy is queued again from the pages mapped now (the driver's pageable path). A hit to
    // the host is always proven before its DMA: a write to old pages could land in memory that
    // now belongs to another mapping (a file's page cache, a moved buffer). Thread-safe.
    // `host_pinned`: the host side looked page-locked to the driver, which it also does for a
    // cached range; memory page-locked by others (no cached range overlaps) is left alone.
    xfer_status copy(void *dst, const void *src, std::size_t bytes, xfer_direction dir, bool host_pinned,
                     bool pages_proven, cudaStream_t s, bool *taken) noexcept;

    // Makes [ptr, ptr + bytes) safe to hand to the driver: evicts the cached ranges it overlaps
    // whose pages changed (the memory was freed and reused: the driver would DMA the old pages)
    // and those it straddles (a copy that crosses a registration's end is refused with
    // cudaErrorInvalidValue). Every copy of the backend calls it for each host pointer before
    // classifying it. Cheap when the cache is empty. `prove_pages` false: only the straddled
    // ranges go (copy() with pages_proven false compares the pages). True when a range went.
    bool drop_stale(const void *ptr, std::size_t bytes, bool prove_pages = true) noexcept;

    // Unregisters cached ranges overlapping [ptr, ptr + bytes) (all of them with bytes == 0
    // and ptr == nullptr), after the device's queued work.
    xfer_status forget(const void *ptr, std::size_t bytes) noexcept;
    void stats(xfer_registration_stats *out) noexcept;

    // The count of cached ranges (readable without the lock) and the smallest copy copy()
    // takes: a context publishes both so that copies skip the calls above when they would do
    // nothing (Context::may_hold_registrations, cache_may_take).
    const std::atomic<std::size_t> &range_count() const noexcept { return ranges_; }
    std::size_t min_bytes() const noexcept { return min_bytes_; }

  private:
    xfer_status evict_locked(std::uintptr_t start) noexcept; // waits for the device first

    std::mutex mutex_;
    std::atomic<std::size_t> ranges_{0}; // lru_.size(), readable without the lock
    RegistrationLru lru_;
    std::size_t min_bytes_;
    std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

} // namespace xfer::cuda::pinned

// SPDX-License-Identifier: Apache-2.0
// The extents of xfer's own buffers (known_memory.hpp): a map under a reader-writer lock, and
// a per-thread cache of the last few extents found in it.
#include "known_memory.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>

#include "recent_extents.hpp"

namespace xfer::cuda::known_memory {
namespace {

struct Registry {
    std::shared_mutex mutex;
    std::map<std::uintptr_t, Extent> by_start;
    // Bumped (under `mutex`, after the erase) by every removal: a thread whose cache holds an
    // older generation empties it before answering from it.
    std::atomic<std::uint64_t> generation{1};
};

Registry &registry() {
    static Registry r;
    return r;
}

// The extents this thread found last: a small copy's two pointers usually fall in the same
// few buffers call after call. Trivially destructible, so it costs nothing at thread exit.
struct ThreadCache {
    std::uint64_t generation = 0;
    RecentExtents<8> extents;
};
thread_local ThreadCache t_cache;

} // namespace

void add(const void *start, std::size_t bytes, Memory m) noexcept {
    if (start == nullptr || bytes == 0) {
        return;
    }
    Registry &r = registry();
    const auto s = reinterpret_cast<std::uintptr_t>(start);
    try {
        std::unique_lock<std::shared_mutex> lock(r.mutex);
        r.by_start[s] = Extent{s, bytes, m};
        r.generation.fetch_add(1, std::memory_order_release); // a replaced extent leaves the caches too
    } catch (const std::bad_alloc &) {
        // Not remembered: pointers inside it are asked about, as for memory xfer did not allocate.
    }
}

void remove(const void *start) noexcept {
    Registry &r = registry();
    std::unique_lock<std::shared_mutex> lock(r.mutex);
    if (r.by_start.erase(reinterpret_cast<std::uintptr_t>(start)) != 0) {
        r.generation.fetch_add(1, std::memory_order_release);
    }
}

void forget_overlapping(const void *start, std::size_t bytes) noexcept {
    Registry &r = registry();
    const auto lo = reinterpret_cast<std::uintptr_t>(start);
    const std::uintptr_t hi = lo + bytes;
    std::unique_lock<std::shared_mutex> lock(r.mutex);
    bool erased = false;
    auto it = r.by_start.upper_bound(lo);
    if (it != r.by_start.begin() && std::prev(it)->second.contains(lo)) {
        --it;
    }
    while (it != r.by_start.end() && it->first < hi) {
        it = r.by_start.erase(it);
        erased = true;
    }
    if (erased) {
        r.generation.fetch_add(1, std::memory_order_release);
    }
}

namespace {

// The calling thread's cache, emptied first when an extent was removed since it was filled.
ThreadCache &current_cache(Registry &r) noexcept {
    // Its address taken once and kept opaque: the compiler would otherwise find the
    // thread-local again (a call to __tls_get_addr) at each use, four times a copy.
    ThreadCache *found = &t_cache;
    asm("" : "+r"(found));
    ThreadCache &cache = *found;
    // The generation is read before the map: an extent removed after this read bumps it again,
    // so what is cached under this generation is dropped at the next lookup.
    const std::uint64_t generation = r.generation.load(std::memory_order_acquire);
    if (cache.generation != generation) {
        cache.extents.clear();
        cache.generation = generation;
    }
    return cache;
}

bool find_in(Registry &r, ThreadCache &cache, const void *ptr, Extent *out) noexcept {
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    if (const Extent *e = cache.extents.find(p)) {
        *out = *e;
        return true;
    }
    Extent found;
    {
        std::shared_lock<std::shared_mutex> lock(r.mutex);
        auto it = r.by_start.upper_bound(p);
        if (it == r.by_start.begin() || !std::prev(it)->second.contains(p)) {
            return false;
        }
        found = std::prev(it)->second;
    }
    *out = cache.extents.add(found);
    return true;
}

} // namespace

bool find(const void *ptr, Memory *m) noexcept {
    Extent e;
    if (!find_extent(ptr, &e)) {
        return false;
    }
    *m = e.memory;
    return true;
}

PairAnswer find_pair(const void *dst, const void *src) noexcept {
    Registry &r = registry();
    ThreadCache &cache = current_cache(r);
    PairAnswer a;
    Extent e;
    if ((a.dst_known = find_in(r, cache, dst, &e))) a.dst = e.memory;
    if ((a.src_known = find_in(r, cache, src, &e))) a.src = e.memory;
    return a;
}

bool find_extent(const void *ptr, Extent *out) noexcept {
    Registry &r = registry();
    return find_in(r, current_cache(r), ptr, out);
}

} // namespace xfer::cuda::known_memory

// SPDX-License-Identifier: Apache-2.0
// The registration cache's background registrar: one thread per context, started by the first
// request, that page-locks ranges the copy policy asked for off the copy path (a range copied
// again while the staging engine serves its copies). It binds the context's device as every
// entry does, and calls cudaHostRegister without the cache's lock, so copies of other ranges
// are not held up; the range joins the cache (and its copies become DMAs) once it is done.
#include <algorithm>

#include "registration_cache.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda::user_memory {

void RegistrationCache::ask_background(std::uintptr_t lo, std::uintptr_t hi) noexcept {
    if (stopping_) return;
    try {
        if (!registrar_.joinable()) registrar_ = std::thread([this] { registrar_loop(); });
        requests_.push_back(Request{lo, hi});
        pending_bytes_ += hi - lo;
        registrar_wake_.notify_one();
    } catch (...) {
        // No thread or no memory for the request: the range stays unregistered; its copies go
        // the unregistered way as before.
        tracker_.mark(lo, hi - lo, RangeState::unregistered);
    }
}

void RegistrationCache::registrar_loop() noexcept {
    CallerBinding binding;
    if (activate(owner_, binding) != XFER_SUCCESS) {
        // The device cannot be bound on this thread: no background registration can happen.
        std::lock_guard<std::mutex> lock(mutex_);
        for (const Request &q : requests_) tracker_.mark(q.lo, q.hi - q.lo, RangeState::refused);
        requests_.clear();
        pending_bytes_ = 0;
        return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        registrar_wake_.wait(lock, [&] { return stopping_ || !requests_.empty(); });
        if (stopping_) break;
        const Request q = requests_.front();
        requests_.pop_front();
        pending_bytes_ -= q.hi - q.lo;
        // Room first (evictions wait for the device, under the lock, as a copy's would); a range
        // that a copy page-locked meanwhile, or that overlaps one now, is left alone.
        xfer_status st = XFER_SUCCESS;
        if (!lru_.overlapping(q.lo, q.hi - q.lo).empty() || !make_room_locked(q.hi - q.lo, &st)) {
            tracker_.mark(q.lo, q.hi - q.lo, st == XFER_SUCCESS ? RangeState::unregistered : RangeState::refused);
            continue;
        }
        pending_bytes_ += q.hi - q.lo; // held against the budget while registering
        registering_ = true;
        registering_range_ = q;
        lock.unlock();
        CachedRange range;
        const bool registered = register_range(q.lo, q.hi, &range);
        lock.lock();
        registering_ = false;
        pending_bytes_ -= q.hi - q.lo;
        registrar_idle_.notify_all();
        if (!registered) {
            tracker_.mark(q.lo, q.hi - q.lo, RangeState::refused);
            continue;
        }
        if (!lru_.overlapping(q.lo, q.hi - q.lo).empty()) {
            // A copy page-locked an overlapping range meanwhile (the driver accepted both): ours goes.
            (void)cudaHostUnregister(reinterpret_cast<void *>(q.lo));
            (void)cudaGetLastError();
            continue;
        }
        ++unreported_registrations_;
        unreported_bytes_ += range.bytes;
        unreported_ns_ += range.register_ns;
        tracker_.forget(q.lo, q.hi - q.lo);
        lru_.insert(std::move(range));
        ranges_.store(lru_.size(), std::memory_order_relaxed);
    }
    lock.unlock();
    (void)binding.restore(XFER_SUCCESS);
}

void RegistrationCache::stop_registrar() noexcept {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        requests_.clear();
        pending_bytes_ = 0;
    }
    registrar_wake_.notify_all();
    if (registrar_.joinable()) registrar_.join();
}

} // namespace xfer::cuda::user_memory

#include "xfer_cuda/slot_queue.hpp"

namespace xfer::cuda {

bool SlotQueue::take_oldest_locked(std::size_t *slot) noexcept {
    bool found = false;
    std::size_t best = 0;
    for (std::size_t i = 0; i < k_slots; ++i) {
        if (!taken_[i] && (!found || released_at_[i] < released_at_[best])) {
            best = i;
            found = true;
        }
    }
    if (found) {
        taken_[best] = true;
        *slot = best;
    }
    return found;
}

std::size_t SlotQueue::acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    std::size_t slot = 0;
    freed_.wait(lock, [&] { return take_oldest_locked(&slot); });
    return slot;
}

bool SlotQueue::try_acquire(std::size_t *slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    return take_oldest_locked(slot);
}

void SlotQueue::release(std::size_t slot) noexcept {
    {
        // lock() only throws for a broken mutex (EINVAL/EDEADLK), never for this one in use.
        std::lock_guard<std::mutex> lock(mutex_);
        taken_[slot] = false;
        released_at_[slot] = ++clock_;
    }
    freed_.notify_one();
}

}  // namespace xfer::cuda

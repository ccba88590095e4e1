// Which staging slots are free for a host thread to fill or drain: the bookkeeping of the
// staging ring, apart from its CUDA memory so it is unit-tested without a device.
// Thread-safe: several threads copy on different streams of one context at once.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace xfer::cuda {

class SlotQueue {
public:
    static constexpr std::size_t k_slots = 4;

    // Blocks until a slot is free and takes it. Hands out the slot released longest ago: its
    // last DMA was queued first, so it is the one most likely finished already.
    // Deadlock rule: call only while holding no slot (a thread holding slots uses try_acquire),
    // so a thread that blocks never keeps a slot from the threads it waits for.
    std::size_t acquire();

    // Takes the free slot released longest ago and returns true, or returns false at once when
    // every slot is taken.
    bool try_acquire(std::size_t *slot);

    // Gives `slot` back (it must be one this thread took) and wakes a waiting thread.
    void release(std::size_t slot) noexcept;

private:
    bool take_oldest_locked(std::size_t *slot) noexcept;

    std::mutex mutex_;
    std::condition_variable freed_;
    std::array<bool, k_slots> taken_{};
    std::array<std::uint64_t, k_slots> released_at_{};  // a tick of clock_ at the last release
    std::uint64_t clock_ = 0;
};

// Gives a slot back at scope exit, so an early return or an exception never loses one.
class SlotLease {
public:
    SlotLease() = default;
    SlotLease(SlotQueue &queue, std::size_t slot) noexcept : queue_(&queue), slot_(slot) {}
    SlotLease(SlotLease &&other) noexcept : queue_(other.queue_), slot_(other.slot_) { other.queue_ = nullptr; }
    SlotLease &operator=(SlotLease &&other) noexcept {
        if (this != &other) {
            reset();
            queue_ = other.queue_;
            slot_ = other.slot_;
            other.queue_ = nullptr;
        }
        return *this;
    }
    SlotLease(const SlotLease &) = delete;
    SlotLease &operator=(const SlotLease &) = delete;
    ~SlotLease() { reset(); }

    std::size_t slot() const noexcept { return slot_; }
    explicit operator bool() const noexcept { return queue_ != nullptr; }
    void reset() noexcept {
        if (queue_ != nullptr) {
            queue_->release(slot_);
            queue_ = nullptr;
        }
    }

private:
    SlotQueue *queue_ = nullptr;
    std::size_t slot_ = 0;
};

}  // namespace xfer::cuda

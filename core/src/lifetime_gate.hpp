// SPDX-License-Identifier: Apache-2.0
// The gate every API call passes to use an object (a context, buffer, stream or event) and
// that its release closes for good.
//
// A call enters, uses the object, leaves; release (xfer_free, *_destroy, xfer_close) closes the
// gate: no call enters from then on, and close() returns once every call inside has left. A
// gate never opens again (the object is gone), so unlike a reader-writer lock there is no
// writer to wait behind: a call that finds the gate closing fails at once.
//
// Why not std::shared_mutex: every call takes two or three of these, and glibc's rwlock lock
// and unlock would be over half of the core's share of a small copy's host time (the per-call
// overhead). Entering and leaving here are one atomic add each; only the
// closing release touches the mutex and condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace xfer::core {

class LifetimeGate {
  public:
    // True when the caller is in; false once the gate is closing or closed.
    bool enter() noexcept {
        if ((state_.fetch_add(1, std::memory_order_acquire) & kClosing) == 0) return true;
        leave();
        return false;
    }

    // Leaves after a successful enter(). The last call out while the gate is closing wakes the
    // closer; the notification is sent under the mutex, so a closer between its check and its
    // wait cannot miss it.
    void leave() noexcept {
        const std::uint32_t before = state_.fetch_sub(1, std::memory_order_release);
        if ((before & kClosing) != 0 && (before & kInside) == 1) {
            std::lock_guard<std::mutex> guard(mutex_);
            left_.notify_all();
        }
    }

    // Closes the gate and waits for the calls inside to leave. Called once per object, by the
    // one thread that took its handle out of the table (or by xfer_close for the context).
    void close() {
        state_.fetch_or(kClosing, std::memory_order_acq_rel);
        std::unique_lock<std::mutex> guard(mutex_);
        left_.wait(guard, [this] { return (state_.load(std::memory_order_acquire) & kInside) == 0; });
    }

  private:
    static constexpr std::uint32_t kClosing = 0x80000000u;
    static constexpr std::uint32_t kInside = ~kClosing;

    std::atomic<std::uint32_t> state_{0}; // kClosing | calls inside (or trying to enter)
    std::mutex mutex_;
    std::condition_variable left_;
};

// Inside a gate for one scope (ContextUse, ObjectUse); empty when default-constructed.
class GatePass {
  public:
    GatePass() = default;
    explicit GatePass(LifetimeGate &gate) : gate_(gate.enter() ? &gate : nullptr) {}
    GatePass(GatePass &&other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    GatePass &operator=(GatePass &&other) noexcept {
        if (this != &other) {
            if (gate_ != nullptr) gate_->leave();
            gate_ = other.gate_;
            other.gate_ = nullptr;
        }
        return *this;
    }
    GatePass(const GatePass &) = delete;
    GatePass &operator=(const GatePass &) = delete;
    ~GatePass() {
        if (gate_ != nullptr) gate_->leave();
    }
    bool inside() const noexcept { return gate_ != nullptr; }

  private:
    LifetimeGate *gate_ = nullptr;
};

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
// A context's memory observer (xfer.h, xfer_set_memory_observer): told of every buffer the
// context allocates, imports and releases and every range it registers and unregisters, so that
// another library's registration cache can follow xfer's memory. Called on the thread that made
// the change; a release is told before the memory goes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <xfer/xfer.h>

namespace xfer::core {

class MemoryEvents {
  public:
    // Installs fn (nullptr: none). A replaced observer's slot is kept until the context goes: an
    // event in flight on another thread may still be reading it.
    void set_observer(xfer_memory_observer_fn fn, void *user_data);

    // A buffer made or about to be released.
    void buffer(xfer_context ctx, xfer_memory_event_kind event, xfer_buffer buffer, void *host_view, void *device_view,
                std::size_t bytes, bool imported) const noexcept;
    // A range registered (its size remembered for its unregistration), about to be unregistered
    // (told only for a range registered here), and unregistered (forgotten).
    void registered(xfer_context ctx, void *ptr, std::size_t bytes) noexcept;
    void unregistering(xfer_context ctx, void *ptr) noexcept;
    void unregistered(void *ptr) noexcept;

  private:
    struct Slot {
        xfer_memory_observer_fn fn;
        void *user_data;
    };
    void tell(const xfer_memory_event &e) const noexcept;
    // A registered range's event (no buffer, no device view).
    void tell_range(xfer_context ctx, xfer_memory_event_kind event, void *ptr, std::size_t bytes) const noexcept;

    std::atomic<const Slot *> observer_{nullptr};
    std::mutex mutex_;
    std::vector<std::unique_ptr<Slot>> slots_;     // under mutex_
    std::map<std::uintptr_t, std::size_t> ranges_; // registered ranges' sizes, under mutex_
};

} // namespace xfer::core

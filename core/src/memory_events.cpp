// SPDX-License-Identifier: Apache-2.0
#include "memory_events.hpp"

namespace xfer::core {

void MemoryEvents::set_observer(xfer_memory_observer_fn fn, void *user_data) {
    if (fn == nullptr) {
        observer_.store(nullptr, std::memory_order_release);
        return;
    }
    auto slot = std::make_unique<Slot>(Slot{fn, user_data});
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.push_back(std::move(slot));
    observer_.store(slots_.back().get(), std::memory_order_release);
}

void MemoryEvents::tell(const xfer_memory_event &e) const noexcept {
    if (const Slot *slot = observer_.load(std::memory_order_acquire)) slot->fn(&e, slot->user_data);
}

void MemoryEvents::tell_range(xfer_context ctx, xfer_memory_event_kind event, void *ptr,
                              std::size_t bytes) const noexcept {
    buffer(ctx, event, nullptr, ptr, nullptr, bytes, false);
}

void MemoryEvents::buffer(xfer_context ctx, xfer_memory_event_kind event, xfer_buffer buffer, void *host_view,
                          void *device_view, std::size_t bytes, bool imported) const noexcept {
    xfer_memory_event e{};
    e.struct_size = sizeof e;
    e.ctx = ctx;
    e.event = event;
    e.buffer = buffer;
    e.host_ptr = host_view;
    e.device_ptr = device_view;
    e.bytes = bytes;
    e.imported = imported ? 1 : 0;
    tell(e);
}

void MemoryEvents::registered(xfer_context ctx, void *ptr, std::size_t bytes) noexcept {
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        ranges_[reinterpret_cast<std::uintptr_t>(ptr)] = bytes;
    } catch (...) {
        // Out of memory for the note: the unregistration is then told with 0 bytes.
    }
    tell_range(ctx, XFER_MEMORY_REGISTERED, ptr, bytes);
}

void MemoryEvents::unregistered(void *ptr) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ranges_.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

void MemoryEvents::unregistering(xfer_context ctx, void *ptr) noexcept {
    std::size_t bytes = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = ranges_.find(reinterpret_cast<std::uintptr_t>(ptr));
        if (it == ranges_.end()) return; // not a range registered here: the backend refuses it
        bytes = it->second;
    }
    tell_range(ctx, XFER_MEMORY_UNREGISTERING, ptr, bytes);
}

} // namespace xfer::core

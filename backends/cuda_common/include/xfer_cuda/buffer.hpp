// SPDX-License-Identifier: Apache-2.0
// A CUDA backend's buffers: the views as the backends lay them out, and the buffer strategy,
// the part of a CUDA backend that is its own (what its buffers are, and how the views are
// allocated, released and copied between). The table's capability bits are derived from the
// strategy's facts (caps_of), never stated beside it.
//
// Also here: the building blocks of strategies whose two views are two allocations
// (separate_views: pinned, pageable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "context.hpp"
#include <xfer/xfer_backend.h>
#include <xfer_plugin/table.hpp>

namespace xfer::cuda {

struct SharedViews; // shareable buffers' views (src/shareable.hpp)

struct Buffer {
    void *host = nullptr;   // host view
    void *device = nullptr; // device view (== host for managed and zero-copy)
    std::size_t bytes = 0;
    Memory host_memory = Memory::pageable;   // what each view is, asked of the driver once
    Memory device_memory = Memory::pageable; // at allocation (known_memory keeps them too)
    // Set for an XFER_ALLOC_SHAREABLE or imported buffer: its views are not the strategy's own
    // allocations but memory other processes map, released by the shareable code. Owned; the
    // buffer entries free it.
    SharedViews *shared = nullptr;
};

// How a backend's shareable buffers keep their host view (BackendDescription::host_sharing):
// none means the backend cannot export.
enum class HostSharing : std::uint32_t {
    none = 0,
    plain = 1,       // a memfd mapping the host reads and writes; copies go the backend's way
    page_locked = 2, // the same, page-locked (cudaHostRegister): copies are DMA
};

inline Buffer &as_buffer(void *buf) { return *static_cast<Buffer *>(buf); }

// The shared buffer entries do what is the same for every CUDA backend around these: catch
// exceptions, bind the context's device, own the Buffer record, hand the views to the core,
// wait for queued work before a release. So each function below runs with the context's device
// current and may leave all of that out.
struct BufferStrategy {
    // What the buffers are: the capability bits of the backend's table follow from these.
    plugin::BufferFacts facts;
    // Fills b.host and b.device for b.bytes (already set). On failure it reports the call that
    // failed and leaves nothing allocated.
    xfer_status (*allocate)(const Context &ctx, unsigned flags, Buffer &b);
    // Releases what allocate made; the device is idle by then (wait_for_queued_work).
    xfer_status (*release)(const Context &ctx, Buffer &b);
    // Queues the move of [offset, offset + bytes) between the views on `stream`, in stream order.
    // nullptr exactly when facts.movement is Movement::none (zero-copy): the entry then succeeds
    // without touching the device.
    xfer_status (*copy_async)(const Context &ctx, const Buffer &b, xfer_direction dir, std::size_t offset,
                              std::size_t bytes, cudaStream_t stream);
};

// The facts fit together, and a copy function exists exactly when something moves.
constexpr bool consistent(const BufferStrategy &s) noexcept {
    return plugin::consistent(s.facts) && s.allocate != nullptr && s.release != nullptr &&
           (s.copy_async == nullptr) == (s.facts.movement == plugin::Movement::none);
}

// The XFER_CAP_* bits of a backend with this strategy (plugin_table puts them in the table).
constexpr unsigned caps_of(const BufferStrategy &s) noexcept { return plugin::caps_of(s.facts); }

// A strategy from its facts and functions, checked: in the initialiser of a constexpr variable
// (as every strategy is declared) an inconsistent one does not compile.
constexpr BufferStrategy strategy(plugin::BufferFacts facts, decltype(BufferStrategy::allocate) allocate,
                                  decltype(BufferStrategy::release) release,
                                  decltype(BufferStrategy::copy_async) copy_async) {
    const BufferStrategy s{facts, allocate, release, copy_async};
    if (!consistent(s)) {
        throw std::logic_error("a buffer strategy whose facts and functions disagree (see consistent())");
    }
    return s;
}

// ------------------------------------------------------------------ separate views
// Buffers whose two views are two allocations (pinned, pageable): the device view is cudaMalloc
// memory, the host view comes from the backend's own host allocator.

// What a backend with separate views keeps to itself: where its host view comes from.
struct HostAllocator {
    // On failure reports the call that failed (through fail/check) and leaves nothing allocated.
    xfer_status (*allocate)(std::size_t bytes, void **host);
    xfer_status (*release)(void *host, std::size_t bytes);
};

// Device view first: an impossible size fails on the device at once, before the host
// allocator runs (page-locking is slow and can starve the host). If the host view then fails,
// the device view is released again, so nothing leaks.
xfer_status allocate_device_first(const HostAllocator &host, Buffer &b);

// Releases both views even when the first release fails; every failure is reported and the
// status of the last one is returned (its message is the one xfer_last_error() shows).
xfer_status release_both_views(const HostAllocator &host, Buffer &b);

// cudaMemcpyAsync between the views on `stream`. `host_kind` (e.g. "pageable"; nullptr for
// none) is named in the failure message as the source or destination.
xfer_status copy_between_views(const Buffer &b, xfer_direction dir, std::size_t offset, std::size_t bytes,
                               cudaStream_t stream, const char *host_kind);

// BufferStrategy::copy_async for page-locked host views: the copy engine reads and writes them
// when the stream reaches the copy, so queuing it is all stream order needs.
xfer_status dma_copy_between_views(const Context &ctx, const Buffer &b, xfer_direction dir, std::size_t offset,
                                   std::size_t bytes, cudaStream_t stream);

namespace detail {
// BufferStrategy's functions take no allocator, so each allocator gets functions of its own.
template <const HostAllocator &H>
struct SeparateViews {
    static xfer_status allocate(const Context &, unsigned /*flags: managed-only hints, ignored*/, Buffer &b) {
        return allocate_device_first(H, b);
    }
    static xfer_status release(const Context &, Buffer &b) { return release_both_views(H, b); }
};
} // namespace detail

// The strategy of a backend with separate views whose host view comes from `H`: its copies
// copy (Movement::copy) with `copy`, and return as `completion` says.
template <const HostAllocator &H>
constexpr BufferStrategy separate_views(decltype(BufferStrategy::copy_async) copy, plugin::Completion completion) {
    return strategy({plugin::Views::separate, plugin::Movement::copy, completion}, detail::SeparateViews<H>::allocate,
                    detail::SeparateViews<H>::release, copy);
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// Buffers whose two views are two allocations (pinned, pageable): the device view is cudaMalloc
// memory, the host view comes from the backend's own host allocator.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>
#include <xfer/xfer_backend.h>

#include "buffer.hpp"
#include "context.hpp"

namespace xfer::cuda {

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
}  // namespace detail

// The strategy of a backend with separate views whose host view comes from `H`.
template <const HostAllocator &H>
constexpr BufferStrategy separate_views(decltype(BufferStrategy::copy_async) copy) {
    return BufferStrategy{detail::SeparateViews<H>::allocate, detail::SeparateViews<H>::release, copy};
}

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// The views of a buffer as the CUDA backends lay them out, and the buffer strategy: the part of
// a CUDA backend that is its own (how the views are allocated, released and copied between).
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>
#include <xfer/xfer_backend.h>

#include "context.hpp"

namespace xfer::cuda {

struct Buffer {
    void *host = nullptr;    // host view
    void *device = nullptr;  // device view (== host for managed)
    std::size_t bytes = 0;
};

inline Buffer &as_buffer(void *buf) { return *static_cast<Buffer *>(buf); }

// The shared buffer entries (buffer_entries.cpp) do what is the same for every CUDA backend
// around these: catch exceptions, bind the context's device, own the Buffer record, hand the
// views to the core, wait for queued work before a release. So each function below runs with
// the context's device current and may leave all of that out.
struct BufferStrategy {
    // Fills b.host and b.device for b.bytes (already set). On failure it reports the call that
    // failed and leaves nothing allocated.
    xfer_status (*allocate)(const Context &ctx, unsigned flags, Buffer &b);
    // Releases what allocate made; the device is idle by then (wait_for_queued_work).
    xfer_status (*release)(const Context &ctx, Buffer &b);
    // Queues the move of [offset, offset + bytes) between the views on `stream`, in stream order.
    // nullptr when the views are one memory and nothing needs queuing (zero-copy): the entry
    // then succeeds without touching the device.
    xfer_status (*copy_async)(const Context &ctx, const Buffer &b, xfer_direction dir, std::size_t offset,
                              std::size_t bytes, cudaStream_t stream);
};

}  // namespace xfer::cuda

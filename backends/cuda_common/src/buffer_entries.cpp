// SPDX-License-Identifier: Apache-2.0
#include <memory>

#include "xfer_cuda/backend.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda {

xfer_status buffer_alloc_entry(const BufferStrategy &s, void *ctx, std::size_t bytes, unsigned flags, void **buf,
                               void **host_view, void **device_view) noexcept {
    return on_device("buffer_alloc", ctx, [&](const Context &c) {
        // The record exists before any memory does, so a failure to make it leaks nothing; the
        // strategy leaves nothing allocated when it fails.
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        if (auto st = s.allocate(c, flags, *b)) {
            return st;
        }
        *host_view = b->host;
        *device_view = b->device;
        *buf = b.release();
        return XFER_SUCCESS;
    });
}

xfer_status buffer_free_entry(const BufferStrategy &s, void *ctx, void *buf) noexcept {
    return guarded("buffer_free", [&] {
        const Context &c = as_context(ctx);
        // Owned before anything can fail: the core forgets the handle whatever this returns.
        std::unique_ptr<Buffer> b(&as_buffer(buf));
        if (auto st = activate(c)) {
            return st;
        }
        const xfer_status waited = wait_for_queued_work(c);
        return last_failure(waited, s.release(c, *b));
    });
}

xfer_status buffer_copy_entry(const BufferStrategy &s, void *ctx, void *buf, xfer_direction dir, std::size_t offset,
                              std::size_t bytes, void *stream) noexcept {
    if (s.copy_async == nullptr) {
        return XFER_SUCCESS;  // one memory, nothing to queue (see BufferStrategy::copy_async)
    }
    return on_device("buffer_copy_async", ctx, [&](const Context &c) {
        return s.copy_async(c, as_buffer(buf), dir, offset, bytes, static_cast<cudaStream_t>(stream));
    });
}

}  // namespace xfer::cuda

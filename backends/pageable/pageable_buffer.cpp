#include "pageable_buffer.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <unistd.h>

#include "pageable_context.hpp"
#include "xfer_cuda/buffer.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/pageable_order.hpp"

namespace xfer::cuda::pageable {
namespace {

std::size_t page_size() {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

}  // namespace

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned /*flags: managed-only hints, ignored*/, void **buf,
                         void **host_view, void **device_view) {
    return guarded("buffer_alloc", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        // Device view first: an impossible size fails on the device at once.
        if (auto st = check(cudaMalloc(&b->device, bytes), "cudaMalloc(%zu bytes)", bytes)) {
            return st;
        }
        // Page-aligned like the memory the staged path and the driver's own staging copy in
        // page units; malloc-class memory otherwise (never registered with CUDA).
        const int err = posix_memalign(&b->host, page_size(), bytes);
        if (err != 0) {
            (void)cudaFree(b->device);
            return fail(err == ENOMEM ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                        "posix_memalign(%zu bytes, page-aligned host view): %s", bytes, std::strerror(err));
        }
        *host_view = b->host;
        *device_view = b->device;
        *buf = b.release();
        return XFER_SUCCESS;
    });
}

xfer_status buffer_free(void *ctx, void *buf) {
    return guarded("buffer_free", [&] {
        const Context &c = as_context(ctx);
        std::unique_ptr<Buffer> b(&as_buffer(buf));
        if (auto st = activate(c)) {
            return st;
        }
        const xfer_status waited = wait_for_queued_work(c);
        std::free(b->host);
        const xfer_status device = check(cudaFree(b->device), "cudaFree(%zu bytes)", b->bytes);
        return last_failure(waited, device);
    });
}

xfer_status buffer_copy_async(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes, void *stream) {
    return guarded("buffer_copy_async", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        const Buffer &b = as_buffer(buf);
        char *host = static_cast<char *>(b.host) + offset;
        char *device = static_cast<char *>(b.device) + offset;
        const auto s = static_cast<cudaStream_t>(stream);
        // The driver reads (H2D) or may write (D2H) pageable memory when the copy is called, not
        // when the stream reaches it: a host function or copy queued earlier on `s` that fills
        // this host range would be overtaken and stale bytes sent. Waiting for `s` first keeps
        // xfer's stream-order promise; it makes this copy synchronous with the host, which is
        // what a pageable copy costs anyway (caps: no XFER_CAP_ASYNC_COPY).
        if (auto st = wait_before_pageable_copy(s)) {
            return st;
        }
        if (dir == XFER_TO_DEVICE) {
            return check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, s),
                         "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyHostToDevice, pageable source)", bytes,
                         offset);
        }
        return check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, s),
                     "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyDeviceToHost, pageable destination)", bytes,
                     offset);
    });
}

}  // namespace xfer::cuda::pageable

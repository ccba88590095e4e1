#include "pinned_buffer.hpp"

#include <memory>

#include "xfer_cuda/buffer.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda::pinned {

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned /*flags: managed-only hints, ignored*/, void **buf,
                         void **host_view, void **device_view) {
    return guarded("buffer_alloc", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        // Device view first: an impossible size fails here at once, before page-locking host
        // memory (slow, and it can starve the host).
        if (auto st = check(cudaMalloc(&b->device, bytes), "cudaMalloc(%zu bytes)", bytes)) {
            return st;
        }
        if (auto st = check(cudaHostAlloc(&b->host, bytes, cudaHostAllocDefault),
                            "cudaHostAlloc(%zu bytes, cudaHostAllocDefault)", bytes)) {
            (void)cudaFree(b->device);
            return st;
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
        const xfer_status host = check(cudaFreeHost(b->host), "cudaFreeHost(%zu bytes)", b->bytes);
        const xfer_status device = check(cudaFree(b->device), "cudaFree(%zu bytes)", b->bytes);
        return last_failure(last_failure(waited, host), device);
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
        if (dir == XFER_TO_DEVICE) {
            return check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, s),
                         "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyHostToDevice)", bytes, offset);
        }
        return check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, s),
                     "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyDeviceToHost)", bytes, offset);
    });
}

}  // namespace xfer::cuda::pinned

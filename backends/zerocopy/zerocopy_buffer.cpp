#include "zerocopy_buffer.hpp"

#include <memory>

#include "xfer_cuda/buffer.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda::zerocopy {

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned /*flags: managed-only hints, ignored*/, void **buf,
                         void **host_view, void **device_view) {
    return guarded("buffer_alloc", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        // The device view is derived from the host allocation, so here the host view comes first.
        if (auto st = check(cudaHostAlloc(&b->host, bytes, cudaHostAllocMapped),
                            "cudaHostAlloc(%zu bytes, cudaHostAllocMapped)", bytes)) {
            return st;
        }
        if (auto st = check(cudaHostGetDevicePointer(&b->device, b->host, 0), "cudaHostGetDevicePointer(%zu bytes)",
                            bytes)) {
            (void)cudaFreeHost(b->host);
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
        const xfer_status freed = check(cudaFreeHost(b->host), "cudaFreeHost(%zu bytes, mapped)", b->bytes);
        return last_failure(waited, freed);
    });
}

xfer_status buffer_copy_async(void * /*ctx*/, void * /*buf*/, xfer_direction /*dir*/, size_t /*offset*/,
                              size_t /*bytes*/, void * /*stream*/) {
    // Both views are the same memory: nothing moves. Nothing needs queuing either: work queued
    // on the stream before this call still runs before work queued after it, and device writes
    // become visible to the host through the stream or event synchronisation the copy contract
    // already asks for before the host reads.
    return XFER_SUCCESS;
}

}  // namespace xfer::cuda::zerocopy

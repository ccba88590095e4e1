#include "managed_buffer.hpp"

#include <memory>

#include "managed_advice.hpp"
#include "xfer_cuda/buffer.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/services.hpp"

namespace xfer::cuda::managed {

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view, void **device_view) {
    return guarded("buffer_alloc", [&] {
        const Context &c = as_context(ctx);
        if (auto st = activate(c)) {
            return st;
        }
        // Managed memory beyond what the device has free "succeeds" and then oversubscribes:
        // page thrashing that can stall or hang the GPU for every process on it. Refuse it up
        // front instead, as an out-of-memory the caller can handle.
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        if (auto st = check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo(device %d)", c.device)) {
            return st;
        }
        if (bytes > free_bytes) {
            return fail(XFER_ERROR_OUT_OF_MEMORY,
                        "cudaMallocManaged(%zu bytes) refused: more than device %d has free (%zu of %zu bytes); "
                        "oversubscribing managed memory can hang the GPU",
                        bytes, c.device, free_bytes, total_bytes);
        }
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        if (auto st = check(cudaMallocManaged(&b->host, bytes, cudaMemAttachGlobal),
                            "cudaMallocManaged(%zu bytes, cudaMemAttachGlobal)", bytes)) {
            return st;
        }
        b->device = b->host;
        if (auto st = apply_advice(b->host, bytes, flags, c.device)) {
            (void)cudaFree(b->host);
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
        const xfer_status freed = check(cudaFree(b->host), "cudaFree(%zu bytes of managed memory)", b->bytes);
        return last_failure(waited, freed);
    });
}

xfer_status buffer_copy_async(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes, void *stream) {
    return guarded("buffer_copy_async", [&] {
        const Context &c = as_context(ctx);
        if (auto st = activate(c)) {
            return st;
        }
        const Buffer &b = as_buffer(buf);
        char *range = static_cast<char *>(b.host) + offset;
        const auto s = static_cast<cudaStream_t>(stream);
        if (!c.caps.concurrent_managed_access) {
            // Without concurrentManagedAccess (Windows/WSL, pre-Pascal GPUs, some Jetsons) the
            // driver cannot prefetch: it moves all managed memory to the device at each kernel
            // launch, and the host may touch managed memory only while the whole device is
            // idle. So to-device needs nothing queued, and to-host waits for the device (a
            // stream sync is not enough there).
            if (dir == XFER_TO_DEVICE) {
                return XFER_SUCCESS;
            }
            return check(cudaDeviceSynchronize(),
                         "cudaDeviceSynchronize (to-host on a device without concurrentManagedAccess)");
        }
        if (dir == XFER_TO_DEVICE) {
            const cudaMemLocation to{cudaMemLocationTypeDevice, c.device};
            return check(cudaMemPrefetchAsync(range, bytes, to, 0, s),
                         "cudaMemPrefetchAsync(%zu bytes at offset %zu, device %d)", bytes, offset, c.device);
        }
        const cudaMemLocation to{cudaMemLocationTypeHost, 0};
        return check(cudaMemPrefetchAsync(range, bytes, to, 0, s), "cudaMemPrefetchAsync(%zu bytes at offset %zu, host)",
                     bytes, offset);
    });
}

}  // namespace xfer::cuda::managed

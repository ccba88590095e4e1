// SPDX-License-Identifier: Apache-2.0
#include "managed_buffer.hpp"

#include "managed_advice.hpp"
#include "managed_context.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda::managed {
namespace {

xfer_status allocate_managed(const Context &c, unsigned flags, Buffer &b) {
    // Managed memory beyond what the device has free "succeeds" and then oversubscribes:
    // page thrashing that can stall or hang the GPU for every process on it. Refuse it up
    // front instead, as an out-of-memory the caller can handle.
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    if (auto st = check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo(device %d)", c.device)) {
        return st;
    }
    if (b.bytes > free_bytes) {
        return fail(XFER_ERROR_OUT_OF_MEMORY,
                    "cudaMallocManaged(%zu bytes) refused: more than device %d has free (%zu of %zu bytes); "
                    "oversubscribing managed memory can hang the GPU",
                    b.bytes, c.device, free_bytes, total_bytes);
    }
    if (auto st = check(cudaMallocManaged(&b.host, b.bytes, cudaMemAttachGlobal),
                        "cudaMallocManaged(%zu bytes, cudaMemAttachGlobal)", b.bytes)) {
        return st;
    }
    if (auto st = apply_advice(b.host, b.bytes, flags, c.device)) {
        (void)cudaFree(b.host);
        b.host = nullptr;
        return st;
    }
    b.device = b.host;
    return XFER_SUCCESS;
}

xfer_status release_managed(const Context &, Buffer &b) {
    return check(cudaFree(b.host), "cudaFree(%zu bytes of managed memory)", b.bytes);
}

xfer_status prefetch(const Context &c, const Buffer &b, xfer_direction dir, std::size_t offset, std::size_t bytes,
                     cudaStream_t s) {
    // A managed buffer's copy invalidated a capture in progress on the H200 (CUDA 13:
    // cudaErrorStreamCaptureInvalidated): refused first, so the application's graph survives.
    if (auto st = refuse_while_capturing(s, bytes, "a managed buffer",
                                         "a managed buffer's prefetch or staged copy to the host cannot be part of a "
                                         "graph: capture the kernels that use the memory (the driver migrates its "
                                         "pages on demand at replay)")) {
        return st;
    }
    char *range = static_cast<char *>(b.host) + offset;
    // A prefetch migrates the pages; to the host the to_host parameter may choose a slot instead.
    const ToHost method = static_cast<const ManagedContext &>(c).mover->method();
    const bool staged = dir == XFER_TO_HOST && c.caps.concurrent_managed_access && method != ToHost::prefetch;
    if (auto st = plugin::take_path(staged ? XFER_PATH_MANAGED_STAGED : XFER_PATH_MANAGED_MIGRATE,
                                    dir == XFER_TO_HOST ? XFER_REASON_CONFIGURED : XFER_REASON_MEMORY, bytes)) {
        return st;
    }
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
    // The method the to_host parameter chose (managed_to_host.hpp).
    return static_cast<const ManagedContext &>(c).mover->to_host(range, bytes, s);
}

} // namespace

// One memory for both views; a copy migrates its pages (a prefetch, or the to_host method's
// DMA into them), queued on the stream.
constexpr BufferStrategy kBuffers =
    strategy({plugin::Views::shared, plugin::Movement::migrate, plugin::Completion::queued}, allocate_managed,
             release_managed, prefetch);
static_assert(caps_of(kBuffers) == (XFER_CAP_SHARED_VIEW | XFER_CAP_MIGRATES | XFER_CAP_ASYNC_COPY),
              "managed: one memory, pages migrate in stream order");

} // namespace xfer::cuda::managed

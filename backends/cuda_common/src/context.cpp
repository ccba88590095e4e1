// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/context.hpp"

#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/packed_batch.hpp"

namespace xfer::cuda {

// Out of line: BatchPacker is complete here only.
Context::Context() = default;
Context::~Context() = default;

xfer_status activate(const Context &ctx) noexcept {
    // A device whose CUDA context a fault made unusable gets one clear answer, not a hang.
    if (auto st = refuse_if_poisoned(ctx.device)) {
        return st;
    }
    return check(cudaSetDevice(ctx.device), "cudaSetDevice(%d)", ctx.device);
}

xfer_status publish_context(int device, Requirement req, std::unique_ptr<Context> ctx, void **out) noexcept {
    if (auto st = open_device(device, req, *ctx)) {
        return st;
    }
    *out = ctx.release();
    return XFER_SUCCESS;
}

xfer_status wait_for_queued_work(const Context &ctx) noexcept {
    if (auto st = check(cudaDeviceSynchronize(),
                        "cudaDeviceSynchronize (waiting for queued work before freeing a buffer on device %d)", ctx.device)) {
        return st;
    }
    const std::uint64_t peers = ctx.peer_devices.load();
    if (peers == 0) {
        return XFER_SUCCESS;
    }
    for (int d = 0; d < 64; ++d) {
        if ((peers >> d & 1u) == 0) {
            continue;
        }
        if (auto st = check(cudaSetDevice(d), "cudaSetDevice(%d)", d)) {
            return st;
        }
        if (auto st = check(cudaDeviceSynchronize(),
                            "cudaDeviceSynchronize (device %d: waiting for peer copies that use device %d's buffer "
                            "before freeing it)", d, ctx.device)) {
            return st;
        }
    }
    return activate(ctx);  // the release runs with the buffer's device current
}

xfer_status context_destroy(void *ctx) {
    return guarded("context_destroy", [&] {
        // No cudaDeviceReset: the primary context is shared with the application and with other
        // xfer contexts on the same device; the core has already released our objects.
        std::unique_ptr<Context> c(static_cast<Context *>(ctx));
        // close() runs even when binding the device fails: page-locked host memory can still
        // be freed, and the context is gone either way.
        const xfer_status bound = activate(*c);
        const xfer_status closed = last_failure(bound, c->close());
        const xfer_status packed = c->packer ? c->packer->close() : XFER_SUCCESS;
        return last_failure(last_failure(closed, packed), c->registrations.remove_all());
    });
}

}  // namespace xfer::cuda

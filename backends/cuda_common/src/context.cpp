// SPDX-License-Identifier: Apache-2.0
// A context's life: probing for devices, opening one, binding it to the calling thread,
// waiting for its queued work, closing it.
#include "xfer_cuda/context.hpp"

#include <cstdio>

#include <cuda.h> // the driver's types only; the entry point comes from the runtime

#include "batch.hpp"
#include "registration.hpp"
#include "xfer_cuda/driver_entry.hpp"

namespace xfer::cuda {

// Out of line: BatchPacker and HostRegistrations are complete here only.
Context::Context() : registrations(std::make_unique<HostRegistrations>()) {}
Context::~Context() = default;

void abandon_host_work(const Context &ctx, cudaError_t err, cudaStream_t stream) noexcept {
    if (HostCopyHook *hook = ctx.host_copy_hook()) {
        hook->abandon(is_sticky(err) ? nullptr : stream);
    }
}

namespace {

// cuCtxGetCurrent, looked up once through the runtime (no link to libcuda); nullptr when this
// driver has none. A read of the calling thread's current context, far cheaper than
// cudaSetDevice or cudaGetDevice.
using CtxGetCurrent = CUresult(CUDAAPI *)(CUcontext *);
CtxGetCurrent ctx_get_current() noexcept {
    static const CtxGetCurrent fn = driver_entry<CtxGetCurrent>("cuCtxGetCurrent", 4000);
    return fn;
}

// The calling thread's current CUcontext, or nullptr when it cannot be read.
void *current_context() noexcept {
    const CtxGetCurrent get = ctx_get_current();
    CUcontext current = nullptr;
    return get != nullptr && get(&current) == CUDA_SUCCESS ? static_cast<void *>(current) : nullptr;
}

} // namespace

xfer_status activate(const Context &ctx) noexcept {
    // A device whose CUDA context a fault made unusable gets one clear answer, not a hang; and
    // nothing xfer queued on it still touches the user's memory once that answer is given.
    if (auto st = refuse_if_poisoned(ctx.device)) {
        if (HostCopyHook *hook = ctx.host_copy_hook()) {
            hook->abandon(nullptr);
        }
        return st;
    }
    // The device's primary context still current on this thread: the device is bound already
    // (the runtime's current device is that of the current context).
    if (ctx.primary_context != nullptr && current_context() == ctx.primary_context) {
        return XFER_SUCCESS;
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
    const cudaError_t synced = cudaDeviceSynchronize();
    if (auto st = check(synced, "cudaDeviceSynchronize (waiting for queued work before freeing a buffer on device %d)",
                        ctx.device)) {
        abandon_host_work(ctx, synced, nullptr); // the buffer is freed next
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
                            "before freeing it)",
                            d, ctx.device)) {
            return st;
        }
    }
    return activate(ctx); // the release runs with the buffer's device current
}

xfer_status close_context(std::unique_ptr<Context> c) noexcept {
    // close() runs even when binding the device fails: page-locked host memory can still be
    // freed, and the context is gone either way.
    const xfer_status bound = activate(*c);
    const xfer_status closed = last_failure(bound, c->close());
    const xfer_status packed = c->packer ? c->packer->close() : XFER_SUCCESS;
    return last_failure(last_failure(closed, packed), c->registrations->remove_all());
}

// ------------------------------------------------------------------ probe and open
namespace {

// cudaGetDeviceCount says "driver version is insufficient" both when the driver is too old
// and when there is no driver at all; the driver version tells the two apart, which is what a
// user reading `xfer-tool list` needs to know.
xfer_status report_count_failure(cudaError_t err) {
    (void)cudaGetLastError();
    int driver = 0;
    int runtime = 0;
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    const xfer_status st =
        status_from_cuda(err) == XFER_ERROR_NO_DEVICE ? XFER_ERROR_NO_DEVICE : XFER_ERROR_BACKEND_UNAVAILABLE;
    if (err == cudaErrorInsufficientDriver && driver == 0) {
        return fail(st, "no CUDA driver: libcuda.so.1 could not be loaded (cudaGetDeviceCount: %s (%s=%d))",
                    cudaGetErrorString(err), cudaGetErrorName(err), static_cast<int>(err));
    }
    if (err == cudaErrorInsufficientDriver) {
        return fail(st, "CUDA driver %d.%d is older than the CUDA runtime %d.%d (cudaGetDeviceCount: %s (%s=%d))",
                    driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10, cudaGetErrorString(err),
                    cudaGetErrorName(err), static_cast<int>(err));
    }
    return fail(st, "cudaGetDeviceCount: %s (%s=%d)", cudaGetErrorString(err), cudaGetErrorName(err),
                static_cast<int>(err));
}

cudaDeviceAttr attribute_of(Requirement req) {
    return req == Requirement::managed_memory ? cudaDevAttrManagedMemory : cudaDevAttrCanMapHostMemory;
}

const char *attribute_name(Requirement req) {
    return req == Requirement::managed_memory ? "cudaDevAttrManagedMemory" : "cudaDevAttrCanMapHostMemory";
}

} // namespace

xfer_status probe_devices(Requirement req, int *device_count) noexcept {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        return report_count_failure(err);
    }
    if (count <= 0) {
        return fail(XFER_ERROR_NO_DEVICE, "cudaGetDeviceCount: no CUDA-capable device is detected (0 devices)");
    }
    if (req != Requirement::none) {
        int usable = 0;
        for (int d = 0; d < count; ++d) {
            int value = 0;
            if (cudaDeviceGetAttribute(&value, attribute_of(req), d) == cudaSuccess && value != 0) {
                ++usable;
            }
        }
        (void)cudaGetLastError();
        if (usable == 0) {
            return fail(XFER_ERROR_BACKEND_UNAVAILABLE, "none of the %d CUDA devices supports %s", count,
                        attribute_name(req));
        }
    }
    // Device indexes stay CUDA ordinals, so the count is every device; one lacking the
    // requirement is refused by name at context_create.
    *device_count = count;
    return XFER_SUCCESS;
}

xfer_status open_device(int device, Requirement req, Context &ctx) noexcept {
    ctx.device = device;
    if (auto st = check(cudaSetDevice(device), "cudaSetDevice(%d)", device)) {
        return st;
    }
    // Creates (or retains) the primary context now rather than inside the first timed copy.
    if (auto st = check(cudaFree(nullptr), "cudaFree(0) creating the primary context of device %d", device)) {
        return st;
    }
    ctx.primary_context = current_context(); // nullptr: activate() always binds the device
    struct {
        cudaDeviceAttr attr;
        int *out;
        const char *name;
    } const reads[] = {
        {cudaDevAttrConcurrentManagedAccess, &ctx.caps.concurrent_managed_access, "cudaDevAttrConcurrentManagedAccess"},
        {cudaDevAttrCanMapHostMemory, &ctx.caps.can_map_host_memory, "cudaDevAttrCanMapHostMemory"},
        {cudaDevAttrManagedMemory, &ctx.caps.managed_memory, "cudaDevAttrManagedMemory"},
    };
    for (const auto &r : reads) {
        if (auto st = check(cudaDeviceGetAttribute(r.out, r.attr, device), "cudaDeviceGetAttribute(%s, device %d)",
                            r.name, device)) {
            return st;
        }
    }
    const int *needed = req == Requirement::managed_memory    ? &ctx.caps.managed_memory
                        : req == Requirement::map_host_memory ? &ctx.caps.can_map_host_memory
                                                              : nullptr;
    if (needed != nullptr && *needed == 0) {
        return fail(XFER_ERROR_BACKEND_UNAVAILABLE, "CUDA device %d does not support %s (attribute is 0)", device,
                    attribute_name(req));
    }
    return XFER_SUCCESS;
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// A context's life: probing for devices, opening one, binding it to the calling thread,
// waiting for its queued work, closing it.
#include "xfer_cuda/context.hpp"

#include <cstdio>
#include <map>
#include <mutex>

#include <cuda.h> // the driver's types only; the entry point comes from the runtime

#include "batch.hpp"
#include "host_pool.hpp"
#include "registration.hpp"
#include "user_memory/calibration_file.hpp"
#include "user_memory/registration_cache.hpp"
#include "xfer_cuda/driver_entry.hpp"

namespace xfer::cuda {

// Out of line: BatchPacker and HostRegistrations are complete here only.
Context::Context() : registrations(std::make_unique<HostRegistrations>()) {}

bool Context::run_on_host_thread(std::function<void()> task) const noexcept {
    return host_pool != nullptr && host_pool->run(std::move(task));
}
Context::~Context() = default; // after close_context: the cache is closed, the engine stopped

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

// The driver calls that bind and unbind contexts, looked up once like cuCtxGetCurrent.
struct ContextCalls {
    CUresult(CUDAAPI *push)(CUcontext) = driver_entry<decltype(push)>("cuCtxPushCurrent", 4000);
    CUresult(CUDAAPI *pop)(CUcontext *) = driver_entry<decltype(pop)>("cuCtxPopCurrent", 4000);
    CUresult(CUDAAPI *set)(CUcontext) = driver_entry<decltype(set)>("cuCtxSetCurrent", 4000);
    CUresult(CUDAAPI *get_device)(CUdevice *, int) = driver_entry<decltype(get_device)>("cuDeviceGet", 2000);
    CUresult(CUDAAPI *retain)(CUcontext *, CUdevice) = driver_entry<decltype(retain)>("cuDevicePrimaryCtxRetain", 7000);
    bool complete() const { return push && pop && set && get_device && retain; }
};
const ContextCalls &context_calls() noexcept {
    static const ContextCalls calls;
    return calls;
}

// Device `device`'s primary context, retained once for the life of the process (as the runtime
// itself keeps it until exit): contexts opened and closed again never release it under the
// application, which shares it. nullptr when the driver lacks the calls or refuses.
void *retained_primary_context(int device) noexcept {
    static std::mutex mutex;
    static std::map<int, CUcontext> *retained = new std::map<int, CUcontext>; // never destroyed
    const ContextCalls &calls = context_calls();
    if (!calls.complete()) {
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex);
    auto found = retained->find(device);
    if (found != retained->end()) {
        return found->second;
    }
    CUdevice dev = 0;
    CUcontext primary = nullptr;
    if (calls.get_device(&dev, device) != CUDA_SUCCESS || calls.retain(&primary, dev) != CUDA_SUCCESS) {
        return nullptr; // open_device then binds the device with cudaSetDevice, which reports
    }
    retained->emplace(device, primary);
    return primary;
}

xfer_status check_driver(CUresult r, const char *call) noexcept {
    if (r == CUDA_SUCCESS) {
        return XFER_SUCCESS;
    }
    return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                "%s failed (CUresult %d)", call, static_cast<int>(r));
}

} // namespace

void CallerBinding::remember() noexcept {
    if (!changed_) {
        caller_ = current_context();
        changed_ = true;
    }
}

xfer_status CallerBinding::push(void *primary) noexcept {
    const ContextCalls &calls = context_calls();
    remember();
    if (auto st = check_driver(calls.push(static_cast<CUcontext>(primary)), "cuCtxPushCurrent")) {
        return st;
    }
    ++pushed_;
    return XFER_SUCCESS;
}

void CallerBinding::note_replaced() noexcept { remember(); }

xfer_status CallerBinding::restore(xfer_status status) noexcept {
    if (!changed_) {
        return status;
    }
    changed_ = false;
    const ContextCalls &calls = context_calls();
    xfer_status st = XFER_SUCCESS;
    for (; pushed_ > 0; --pushed_) {
        CUcontext popped = nullptr;
        st = last_failure(st, check_driver(calls.pop(&popped), "cuCtxPopCurrent (giving the caller its context back)"));
    }
    // A cudaSetDevice meanwhile replaced the top of the stack (the caller's context, or one
    // pushed here): making the caller's current again is what is left to undo.
    if (calls.set != nullptr && current_context() != caller_) {
        st = last_failure(st, check_driver(calls.set(static_cast<CUcontext>(caller_)),
                                           "cuCtxSetCurrent (giving the caller its context back)"));
    }
    return status != XFER_SUCCESS ? status : st;
}

xfer_status activate(const Context &ctx, CallerBinding &binding) noexcept {
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
    if (ctx.primary_context != nullptr) {
        if (current_context() == ctx.primary_context) {
            return XFER_SUCCESS;
        }
        return binding.push(ctx.primary_context);
    }
    // A driver without the context calls (open_device could not read the primary context).
    binding.note_replaced();
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
    // The peer devices are waited for with each one current in turn; then the binding the
    // entry had (the buffer's device) is current again, for the release.
    CallerBinding entry_binding;
    for (int d = 0; d < 64; ++d) {
        if ((peers >> d & 1u) == 0) {
            continue;
        }
        entry_binding.note_replaced();
        if (auto st = check(cudaSetDevice(d), "cudaSetDevice(%d)", d)) {
            return entry_binding.restore(st);
        }
        if (auto st = check(cudaDeviceSynchronize(),
                            "cudaDeviceSynchronize (device %d: waiting for peer copies that use device %d's buffer "
                            "before freeing it)",
                            d, ctx.device)) {
            return entry_binding.restore(st);
        }
    }
    return entry_binding.restore(XFER_SUCCESS);
}

xfer_status close_context(std::unique_ptr<Context> c) noexcept {
    // close() runs even when binding the device fails: page-locked host memory can still be
    // freed, and the context is gone either way.
    CallerBinding binding;
    binding.note_replaced(); // close waits and frees with the device current, then gives it back
    const xfer_status bound = activate(*c, binding);
    // The registration cache first: its background registrar stops, and what it page-locked goes
    // before the staging engine's arena does.
    const xfer_status unlocked = c->cache ? c->cache->close() : XFER_SUCCESS;
    const xfer_status closed = last_failure(last_failure(bound, unlocked), c->close());
    const xfer_status packed = c->packer ? c->packer->close() : XFER_SUCCESS;
    if (c->host_pool) c->host_pool->join(); // every engine that used it has stopped
    return binding.restore(last_failure(last_failure(closed, packed), c->registrations->remove_all()));
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

namespace {

xfer_status open_device_bound(int device, Requirement req, Context &ctx, CallerBinding &binding) noexcept {
    ctx.device = device;
    if (void *primary = retained_primary_context(device)) {
        // Made current for this call only: the caller's binding (and the runtime's current
        // device) stay as they were.
        ctx.primary_context = primary;
        if (auto st = binding.push(primary)) {
            return st;
        }
    } else {
        binding.note_replaced();
        if (auto st = check(cudaSetDevice(device), "cudaSetDevice(%d)", device)) {
            return st;
        }
    }
    // Initialises the runtime on the primary context now rather than inside the first timed copy.
    if (auto st = check(cudaFree(nullptr), "cudaFree(0) creating the primary context of device %d", device)) {
        return st;
    }
    // Without the driver's context calls primary_context stays nullptr: activate() then always
    // binds the device with cudaSetDevice.
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

} // namespace

xfer_status open_device(int device, Requirement req, Context &ctx) noexcept {
    CallerBinding binding;
    binding.note_replaced(); // the runtime's first call may bind a context implicitly: undone
    return binding.restore(open_device_bound(device, req, ctx, binding));
}

} // namespace xfer::cuda

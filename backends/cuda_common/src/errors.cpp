// SPDX-License-Identifier: Apache-2.0
// CUDA failures as xfer statuses, and devices a sticky fault made unusable.
#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

xfer_status status_from_cuda(cudaError_t err) noexcept {
    switch (err) {
    case cudaSuccess:
        return XFER_SUCCESS;
    case cudaErrorMemoryAllocation:
        return XFER_ERROR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
        return XFER_ERROR_NO_DEVICE;
    case cudaErrorNotReady:
        return XFER_ERROR_NOT_READY;
    default:
        return XFER_ERROR_BACKEND;
    }
}

namespace {

// One record per device ordinal; written once (the first sticky error), read lock-free.
constexpr int kMaxDevices = 64;
struct Poison {
    std::atomic<int> state{0}; // 0 healthy, 1 being written, 2 poisoned
    char what[768];            // room for the longest call text check() formats (512) and the CUDA message
};
Poison g_poison[kMaxDevices];

void poison_current_device(const char *call, cudaError_t err) noexcept {
    int device = -1;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
        return;
    }
    Poison &p = g_poison[device];
    int healthy = 0;
    if (!p.state.compare_exchange_strong(healthy, 1)) {
        return; // the first fault is the one to name
    }
    std::snprintf(p.what, sizeof p.what, "%s failed with %s (%s=%d)", call, cudaGetErrorString(err),
                  cudaGetErrorName(err), static_cast<int>(err));
    p.state.store(2);
}

} // namespace

bool is_sticky(cudaError_t err) noexcept {
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
        return true;
    default:
        return false;
    }
}

xfer_status refuse_if_poisoned(int device) noexcept {
    if (device < 0 || device >= kMaxDevices || g_poison[device].state.load() != 2) {
        return XFER_SUCCESS;
    }
    return fail(XFER_ERROR_BACKEND_UNAVAILABLE,
                "device %d is unusable in this process since an earlier fault: %s; CUDA keeps such errors for the life "
                "of the process: close the context and restart the process to use device %d again",
                device, g_poison[device].what, device);
}

xfer_status check_failed(cudaError_t err, const char *call_format, ...) noexcept {
    // Reset the runtime's per-thread last error: the failure is reported through xfer, and the
    // application's own cudaGetLastError() must not see an error its own calls did not cause.
    // (Sticky errors, e.g. a faulting kernel, stay: the runtime keeps those regardless.)
    (void)cudaGetLastError();
    char call[512];
    va_list args;
    va_start(args, call_format);
    std::vsnprintf(call, sizeof call, call_format, args);
    va_end(args);
    if (is_sticky(err)) {
        poison_current_device(call, err);
        return fail(XFER_ERROR_BACKEND, "%s: %s (%s=%d); the CUDA context of this device is now unusable", call,
                    cudaGetErrorString(err), cudaGetErrorName(err), static_cast<int>(err));
    }
    return fail(status_from_cuda(err), "%s: %s (%s=%d)", call, cudaGetErrorString(err), cudaGetErrorName(err),
                static_cast<int>(err));
}

xfer_status check_query(cudaError_t err, const char *call) noexcept {
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return XFER_ERROR_NOT_READY;
    }
    return check(err, "%s", call);
}

} // namespace xfer::cuda

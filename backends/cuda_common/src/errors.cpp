#include "xfer_cuda/errors.hpp"

#include <cstdarg>
#include <cstdio>

#include "xfer_cuda/services.hpp"

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

xfer_status check(cudaError_t err, const char *call_format, ...) noexcept {
    if (err == cudaSuccess) {
        return XFER_SUCCESS;
    }
    // Reset the runtime's per-thread last error: the failure is reported through xfer, and the
    // application's own cudaGetLastError() must not see an error its own calls did not cause.
    // (Sticky errors, e.g. a faulting kernel, stay: the runtime keeps those regardless.)
    (void)cudaGetLastError();
    char call[512];
    va_list args;
    va_start(args, call_format);
    std::vsnprintf(call, sizeof call, call_format, args);
    va_end(args);
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

}  // namespace xfer::cuda

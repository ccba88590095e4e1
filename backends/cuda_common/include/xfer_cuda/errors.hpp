// SPDX-License-Identifier: Apache-2.0
// CUDA runtime error codes -> xfer_status, with messages that name the failing call.
#pragma once

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

namespace xfer::cuda {

// cudaErrorMemoryAllocation -> OUT_OF_MEMORY; NoDevice, InsufficientDriver, InvalidDevice,
// DevicesUnavailable -> NO_DEVICE; NotReady -> NOT_READY; anything else -> BACKEND.
xfer_status status_from_cuda(cudaError_t err) noexcept;

// XFER_SUCCESS when err is cudaSuccess. Otherwise reports, e.g.
//   "cudaMalloc(268435456 bytes): out of memory (cudaErrorMemoryAllocation=2)"
// where the part before the colon is `call_format` formatted with the arguments (built only
// on failure, so checks cost nothing on the fast path), clears the runtime's per-thread last
// error so it does not leak into the application's cudaGetLastError(), and returns the mapped
// status.
xfer_status check(cudaError_t err, const char *call_format, ...) noexcept
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// check() for the answer of a query (cudaStreamQuery, cudaEventQuery, cudaEventElapsedTime):
// cudaErrorNotReady is an answer there, not a failure, so it becomes NOT_READY with no message
// and is kept out of the application's cudaGetLastError().
xfer_status check_query(cudaError_t err, const char *call) noexcept;

// Sticky errors (a kernel that faulted, a device-side assert, ...) leave the CUDA context of
// the device unusable for the rest of the process. check() records the first one per device;
// from then on refuse_if_poisoned() answers XFER_ERROR_BACKEND_UNAVAILABLE naming that fault,
// without calling CUDA (a call could hang or report the old fault as a new one). Other devices,
// and other backends, are unaffected.
bool is_sticky(cudaError_t err) noexcept;
xfer_status refuse_if_poisoned(int device) noexcept;

// When a release path makes two calls and reports both, the later message is the one
// xfer_last_error() shows, so its status is the one to return.
inline xfer_status last_failure(xfer_status earlier, xfer_status later) noexcept {
    return later != XFER_SUCCESS ? later : earlier;
}

}  // namespace xfer::cuda

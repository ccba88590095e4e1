// SPDX-License-Identifier: Apache-2.0
#include "engine_copy.hpp"

#include <cstdint>

#include <cuda.h> // the driver's types only; the entry points come from the runtime

#include "xfer_cuda/driver_entry.hpp"

namespace xfer::cuda {
namespace {

using HtoD = CUresult (*)(CUdeviceptr, const void *, std::size_t, CUstream);
using DtoH = CUresult (*)(void *, CUdeviceptr, std::size_t, CUstream);
using DtoD = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);

// The driver's copy functions, found once per process (nullptr where a driver has none: every
// copy then goes to the runtime).
struct DriverCopies {
    HtoD htod = driver_entry<HtoD>("cuMemcpyHtoDAsync", 12000);
    DtoH dtoh = driver_entry<DtoH>("cuMemcpyDtoHAsync", 12000);
    DtoD dtod = driver_entry<DtoD>("cuMemcpyDtoDAsync", 12000);
    DtoD any = driver_entry<DtoD>("cuMemcpyAsync", 12000); // unified addressing: any to any
};

const DriverCopies &driver_copies() noexcept {
    static const DriverCopies copies;
    return copies;
}

// A stream-capture refusal invalidates the capture it refuses, so a retry through the runtime
// would only say "capture invalidated": these are answered as they are (the driver's and the
// runtime's codes are the same numbers for them).
static_assert(static_cast<int>(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) ==
                      static_cast<int>(cudaErrorStreamCaptureUnsupported) &&
                  static_cast<int>(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) ==
                      static_cast<int>(cudaErrorStreamCaptureWrongThread),
              "the stream-capture error codes of the driver and the runtime agree");
bool capture_refusal(CUresult r) noexcept {
    return r >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && r <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
}

CUdeviceptr device_address(const void *p) noexcept {
    return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(p));
}

} // namespace

cudaError_t engine_copy(void *dst, const void *src, std::size_t bytes, cudaMemcpyKind kind,
                        cudaStream_t stream) noexcept {
    const DriverCopies &d = driver_copies();
    const CUstream s = stream; // a runtime stream is the driver's stream (one type)
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    switch (kind) {
    case cudaMemcpyHostToDevice:
        r = d.htod != nullptr ? d.htod(device_address(dst), src, bytes, s) : r;
        break;
    case cudaMemcpyDeviceToHost:
        r = d.dtoh != nullptr ? d.dtoh(dst, device_address(src), bytes, s) : r;
        break;
    case cudaMemcpyDeviceToDevice:
        r = d.dtod != nullptr ? d.dtod(device_address(dst), device_address(src), bytes, s) : r;
        break;
    case cudaMemcpyDefault:
        r = d.any != nullptr ? d.any(device_address(dst), device_address(src), bytes, s) : r;
        break;
    default:
        break; // (host to host: the runtime's)
    }
    if (r == CUDA_SUCCESS) {
        return cudaSuccess;
    }
    if (capture_refusal(r)) {
        return static_cast<cudaError_t>(r);
    }
    // The copy was refused (or, for pageable memory the driver stages itself, stopped part-way:
    // copying the same bytes again is harmless): the runtime queues it or says why not, in its
    // own terms.
    return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}

} // namespace xfer::cuda

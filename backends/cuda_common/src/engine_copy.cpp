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
    // Nothing was queued: the runtime queues it or says why not, in its own terms.
    return cudaMemcpyAsync(dst, src, bytes, kind, stream);
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "managed_advice.hpp"

#include <cuda_runtime_api.h>

#include "xfer_cuda/context.hpp"

namespace xfer::cuda::managed {

xfer_status apply_advice(void *ptr, std::size_t bytes, unsigned flags, int device) noexcept {
    const cudaMemLocation on_device{cudaMemLocationTypeDevice, device};
    const cudaMemLocation on_host{cudaMemLocationTypeHost, 0}; // id is ignored for the host
    if (flags & XFER_ALLOC_READ_MOSTLY) {
        // The location is ignored for read-mostly; the device is passed to be explicit.
        if (auto st = check(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetReadMostly, on_device),
                            "cudaMemAdvise(%zu bytes, cudaMemAdviseSetReadMostly)", bytes)) {
            return st;
        }
    }
    if (flags & XFER_ALLOC_PREFER_DEVICE) {
        if (auto st = check(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, on_device),
                            "cudaMemAdvise(%zu bytes, cudaMemAdviseSetPreferredLocation, device %d)", bytes, device)) {
            return st;
        }
    }
    if (flags & XFER_ALLOC_PREFER_HOST) {
        if (auto st = check(cudaMemAdvise(ptr, bytes, cudaMemAdviseSetPreferredLocation, on_host),
                            "cudaMemAdvise(%zu bytes, cudaMemAdviseSetPreferredLocation, host)", bytes)) {
            return st;
        }
    }
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::managed

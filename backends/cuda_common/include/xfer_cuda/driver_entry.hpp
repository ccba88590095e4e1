// SPDX-License-Identifier: Apache-2.0
// Driver API functions reached through the runtime (cudaGetDriverEntryPointByVersion), so that
// no plugin links libcuda: a machine without a driver still loads it and reports why.
#pragma once

#include <cuda_runtime_api.h>

namespace xfer::cuda {

// The driver function `name` with the signature of driver version `version` (e.g. 12000 for
// CUDA 12's), as a `Fn`; nullptr when this driver has none (the runtime's error is cleared).
template <class Fn>
Fn driver_entry(const char *name, int version) noexcept {
    void *found = nullptr;
    cudaDriverEntryPointQueryResult result{};
    if (cudaGetDriverEntryPointByVersion(name, &found, version, cudaEnableDefault, &result) != cudaSuccess ||
        result != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return reinterpret_cast<Fn>(found);
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the zero-copy backend.
#include "xfer_cuda/backend.hpp"
#include "zerocopy_buffer.hpp"

namespace xfer::cuda::zerocopy {
namespace {

const BackendDescription kBackend{
    "zerocopy", "mapped page-locked host memory (cudaHostAllocMapped) the device accesses directly; nothing is copied",
    Requirement::map_host_memory, // cudaHostGetDevicePointer needs canMapHostMemory
    kBuffers,                     // the table's capability bits follow from it (zerocopy_buffer.cpp)
};

} // namespace
} // namespace xfer::cuda::zerocopy

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::zerocopy::kBackend>(core);
}

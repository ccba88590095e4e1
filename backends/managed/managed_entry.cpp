// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the managed backend.
#include "managed_buffer.hpp"
#include "managed_context.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::managed {
namespace {

const BackendDescription kBackend{
    "managed",
    "unified memory (cudaMallocManaged), one pointer for host and device; copies are prefetches",
    Requirement::managed_memory,
    kBuffers, // the table's capability bits follow from it (managed_buffer.cpp)
    kParams,
    kParamCount,
    make_context,
};

} // namespace
} // namespace xfer::cuda::managed

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::managed::kBackend>(core);
}

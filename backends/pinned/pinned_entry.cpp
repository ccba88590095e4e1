// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the pinned backend.
#include "pinned_buffer.hpp"
#include "pinned_context.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pinned {
namespace {

const BackendDescription kBackend{
    "pinned",
    "page-locked host memory (cudaHostAlloc) + cudaMalloc; asynchronous DMA copies",
    Requirement::none,
    kBuffers, // the table's capability bits follow from it (pinned_buffer.cpp)
    kParams,
    kParamCount,
    make_context,
    HostSharing::page_locked, // XFER_ALLOC_SHAREABLE: a memfd host view, page-locked: DMA copies
};

} // namespace
} // namespace xfer::cuda::pinned

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::pinned::kBackend>(core);
}

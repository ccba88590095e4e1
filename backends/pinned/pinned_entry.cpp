// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the pinned backend.
#include "pinned_buffer.hpp"
#include "pinned_context.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pinned {
namespace {

const BackendDescription k_backend{
    "pinned",
    "page-locked host memory (cudaHostAlloc) + cudaMalloc; asynchronous DMA copies",
    Requirement::none,
    k_buffers,  // the table's capability bits follow from it (pinned_buffer.cpp)
    k_params,
    k_param_count,
    make_context,
};

}  // namespace
}  // namespace xfer::cuda::pinned

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::pinned::k_backend>(core);
}

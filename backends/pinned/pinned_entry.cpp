// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the pinned backend.
#include "pinned_buffer.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pinned {
namespace {

const BackendDescription kBackend{
    "pinned",
    "page-locked host memory (cudaHostAlloc) + cudaMalloc; asynchronous DMA copies",
    Requirement::none,
    kBuffers, // the table's capability bits follow from it (pinned_buffer.cpp)
    nullptr,  // no parameters of its own: those every CUDA backend declares (path, pin_limit, host_threads)
    0,
    nullptr,                  // a plain Context
    HostSharing::page_locked, // XFER_ALLOC_SHAREABLE: a memfd host view, page-locked: DMA copies
    nullptr,                  // no derived values of its own
    0,
    // Without measurements of this machine the strategy's own rule stands: user memory is
    // page-locked on first use, from registration_min up.
    UserMemoryRule::register_on_first_use,
};

} // namespace
} // namespace xfer::cuda::pinned

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::pinned::kBackend>(core);
}

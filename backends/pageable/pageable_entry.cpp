// SPDX-License-Identifier: Apache-2.0
// Plugin entry of the pageable backend.
#include "pageable_buffer.hpp"
#include "pageable_context.hpp"
#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pageable {
namespace {

const BackendDescription kBackend{
    "pageable",
    "ordinary (pageable) host memory + cudaMalloc; large copies staged through page-locked slots by host "
    "threads, in stream order",
    Requirement::none,
    kBuffers, // the table's capability bits follow from it (pageable_buffer.cpp)
    kParams,
    kParamCount,
    make_context,
    HostSharing::plain, // XFER_ALLOC_SHAREABLE: a memfd host view, staged as any pageable memory
    kDerived,
    kDerivedCount,
    UserMemoryRule::unregistered, // without a calibration: the driver, or the engine from its crossover up
    true,                         // a staging engine: the staged crossovers are derived for it
};

} // namespace
} // namespace xfer::cuda::pageable

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    return xfer::cuda::plugin_table<xfer::cuda::pageable::kBackend>(core);
}

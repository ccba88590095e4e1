// Plugin entry of the pinned backend.
#include <memory>

#include "pinned_buffer.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/services.hpp"

namespace xfer::cuda::pinned {
namespace {

xfer_status probe(int *device_count) {
    return guarded("probe", [&] { return probe_devices(Requirement::none, device_count); });
}

xfer_status context_create(int device, const xfer_backend_param_value *, size_t, void **ctx) {
    return guarded("context_create",
                   [&] { return publish_context(device, Requirement::none, std::make_unique<Context>(), ctx); });
}

xfer_backend_table make_table() {
    xfer_backend_table t{};
    fill_common_entries(t);
    t.name = "pinned";
    t.description = "page-locked host memory (cudaHostAlloc) + cudaMalloc; asynchronous DMA copies";
    t.caps = XFER_CAP_ASYNC_COPY;
    t.probe = probe;
    t.context_create = context_create;
    t.buffer_alloc = buffer_alloc;
    t.buffer_free = buffer_free;
    t.buffer_copy_async = buffer_copy_async;
    return t;
}

}  // namespace
}  // namespace xfer::cuda::pinned

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    xfer::cuda::set_core_services(core);
    static const xfer_backend_table table = xfer::cuda::pinned::make_table();
    return &table;
}

// Plugin entry of the managed backend.
#include <memory>

#include "managed_buffer.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/services.hpp"

namespace xfer::cuda::managed {
namespace {

xfer_status probe(int *device_count) {
    return guarded("probe", [&] { return probe_devices(Requirement::managed_memory, device_count); });
}

xfer_status context_create(int device, const xfer_backend_param_value *, size_t, void **ctx) {
    return guarded("context_create", [&] {
        return publish_context(device, Requirement::managed_memory, std::make_unique<Context>(), ctx);
    });
}

xfer_backend_table make_table() {
    xfer_backend_table t{};
    fill_common_entries(t);
    t.name = "managed";
    t.description = "unified memory (cudaMallocManaged), one pointer for host and device; copies are prefetches";
    t.caps = XFER_CAP_SHARED_VIEW | XFER_CAP_MIGRATES | XFER_CAP_ASYNC_COPY;
    t.probe = probe;
    t.context_create = context_create;
    t.buffer_alloc = buffer_alloc;
    t.buffer_free = buffer_free;
    t.buffer_copy_async = buffer_copy_async;
    return t;
}

}  // namespace
}  // namespace xfer::cuda::managed

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    xfer::cuda::set_core_services(core);
    static const xfer_backend_table table = xfer::cuda::managed::make_table();
    return &table;
}

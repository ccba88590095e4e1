// Plugin entry of the zero-copy backend.
#include <memory>

#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/services.hpp"
#include "zerocopy_buffer.hpp"

namespace xfer::cuda::zerocopy {
namespace {

xfer_status probe(int *device_count) {
    return guarded("probe", [&] { return probe_devices(Requirement::map_host_memory, device_count); });
}

xfer_status context_create(int device, const xfer_backend_param_value *, size_t, void **ctx) {
    return guarded("context_create", [&] {
        return publish_context(device, Requirement::map_host_memory, std::make_unique<Context>(), ctx);
    });
}

xfer_backend_table make_table() {
    xfer_backend_table t{};
    fill_common_entries(t);
    t.name = "zerocopy";
    t.description = "mapped page-locked host memory (cudaHostAllocMapped) the device accesses directly; nothing is copied";
    t.caps = XFER_CAP_SHARED_VIEW | XFER_CAP_NO_COPY;
    t.probe = probe;
    t.context_create = context_create;
    t.buffer_alloc = buffer_alloc;
    t.buffer_free = buffer_free;
    t.buffer_copy_async = buffer_copy_async;
    return t;
}

}  // namespace
}  // namespace xfer::cuda::zerocopy

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    xfer::cuda::set_core_services(core);
    static const xfer_backend_table table = xfer::cuda::zerocopy::make_table();
    return &table;
}

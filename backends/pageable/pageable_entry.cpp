// Plugin entry of the pageable backend.
#include <memory>

#include "pageable_buffer.hpp"
#include "pageable_context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/services.hpp"

namespace xfer::cuda::pageable {
namespace {

xfer_status probe(int *device_count) {
    return guarded("probe", [&] { return probe_devices(Requirement::none, device_count); });
}

xfer_status context_create(int device, const xfer_backend_param_value *params, size_t param_count, void **ctx) {
    return guarded("context_create", [&] {
        auto c = std::make_unique<PageableContext>();
        // Parameters first: a bad configuration is reported without touching the device.
        if (auto st = read_params(params, param_count, *c)) {
            return st;
        }
        return publish_context(device, Requirement::none, std::move(c), ctx);
    });
}

xfer_backend_table make_table() {
    xfer_backend_table t{};
    fill_common_entries(t);
    t.name = "pageable";
    t.description = "ordinary (pageable) host memory + cudaMalloc; copies staged by the CUDA driver";
    t.caps = 0;
    t.params = k_params;
    t.param_count = k_param_count;
    t.probe = probe;
    t.context_create = context_create;
    t.buffer_alloc = buffer_alloc;
    t.buffer_free = buffer_free;
    t.buffer_copy_async = buffer_copy_async;
    return t;
}

}  // namespace
}  // namespace xfer::cuda::pageable

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    xfer::cuda::set_core_services(core);
    static const xfer_backend_table table = xfer::cuda::pageable::make_table();
    return &table;
}

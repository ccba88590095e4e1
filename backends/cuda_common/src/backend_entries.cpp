// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/backend.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/packed_batch.hpp"

namespace xfer::cuda {

std::vector<xfer_backend_param> with_common_params(const xfer_backend_param *own, std::size_t count) {
    std::vector<xfer_backend_param> all(own, own + count);
    all.insert(all.end(), k_batch_params, k_batch_params + k_batch_param_count);
    return all;
}

xfer_status probe_entry(const BackendDescription &d, int *device_count) noexcept {
    return guarded("probe", [&] { return probe_devices(d.requirement, device_count); });
}

xfer_status context_create_entry(const BackendDescription &d, int device, const xfer_backend_param_value *params,
                                 std::size_t param_count, void **ctx) noexcept {
    return guarded("context_create", [&] {
        std::unique_ptr<Context> c;
        if (d.make_context == nullptr) {
            c = std::make_unique<Context>();
        } else if (auto st = d.make_context(params, param_count, &c)) {
            // Parameters come first: a bad configuration is reported without touching the device.
            return st;
        }
        if (auto st = read_batch_params(d.name, params, param_count, *c)) {
            return st;
        }
        return publish_context(device, d.requirement, std::move(c), ctx);
    });
}

}  // namespace xfer::cuda

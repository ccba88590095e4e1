// SPDX-License-Identifier: Apache-2.0
#include "managed_context.hpp"

#include <cstring>

#include "xfer_cuda/params.hpp"
#include "xfer_cuda/services.hpp"

namespace xfer::cuda::managed {

const xfer_backend_param k_params[] = {
    {"to_host", "string", "prefetch",
     "how xfer_copy_async(XFER_TO_HOST) moves managed memory: prefetch (cudaMemPrefetchAsync to the host), dma "
     "(copy into a device slot, discard-and-prefetch the pages to the host, one DMA back into them) or staged "
     "(one DMA into a page-locked slot, discard-and-prefetch, a host copy into the pages); see "
     "backends/managed/README.md"},
    {"to_host_chunk", "size", "67108864",
     "bytes per chunk (and per each of the 2 slots) of the dma and staged to-host methods"},
};
const std::size_t k_param_count = sizeof k_params / sizeof k_params[0];

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    const char *method = param_text(k_params, k_param_count, values, count, "to_host");
    ToHost to_host = ToHost::prefetch;
    if (std::strcmp(method, "dma") == 0) {
        to_host = ToHost::dma;
    } else if (std::strcmp(method, "staged") == 0) {
        to_host = ToHost::staged;
    } else if (std::strcmp(method, "prefetch") != 0) {
        return fail(XFER_ERROR_CONFIG, "managed: parameter to_host = '%s' is not one of prefetch, dma, staged", method);
    }
    std::uint64_t chunk = 0;
    // 2 MiB at least (one device page), 1 GiB at most (two slots are allocated).
    if (auto st = param_u64("managed", k_params, k_param_count, values, count, "to_host_chunk", 2u << 20,
                            1ull << 30, &chunk)) {
        return st;
    }
    auto ctx = std::make_unique<ManagedContext>();
    ctx->mover = std::make_unique<ManagedToHost>(to_host, static_cast<std::size_t>(chunk));
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

}  // namespace xfer::cuda::managed

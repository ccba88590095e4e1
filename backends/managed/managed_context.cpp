// SPDX-License-Identifier: Apache-2.0
#include "managed_context.hpp"

#include <cstddef>

#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::managed {

// The help text names the slot count of the to-host methods, built from it.
constexpr auto kChunkHelp =
    plugin::join("bytes per chunk (and per each of the ", plugin::decimal<ManagedToHost::kSlots>().text,
                 " slots) of the dma and staged to-host methods");

constexpr xfer_backend_param kParams[] = {
    {"to_host", "string", "prefetch",
     "how xfer_copy_async(XFER_TO_HOST) moves managed memory: prefetch (cudaMemPrefetchAsync to the host), dma "
     "(copy into a device slot, discard-and-prefetch the pages to the host, one DMA back into them) or staged "
     "(one DMA into a page-locked slot, discard-and-prefetch, a host copy into the pages); see "
     "backends/managed/README.md"},
    {"to_host_chunk", "size", "67108864", kChunkHelp.text},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];
static_assert(plugin::declared_defaults_are_decimal(kParams), "param_u64 parses declared defaults as decimals");

namespace {
// The values of to_host, in the order of ToHost.
constexpr const char *kToHostMethods[] = {"prefetch", "dma", "staged"};
static_assert(sizeof kToHostMethods / sizeof kToHostMethods[0] == static_cast<std::size_t>(ToHost::staged) + 1);
} // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    std::size_t method = 0;
    if (auto st = param_choice("managed", kParams, kParamCount, values, count, "to_host", kToHostMethods, &method)) {
        return st;
    }
    const auto to_host = static_cast<ToHost>(method);
    std::uint64_t chunk = 0;
    // 2 MiB at least (one device page), 1 GiB at most (two slots are allocated).
    if (auto st =
            param_u64("managed", kParams, kParamCount, values, count, "to_host_chunk", 2u << 20, 1ull << 30, &chunk)) {
        return st;
    }
    auto ctx = std::make_unique<ManagedContext>();
    ctx->mover = std::make_unique<ManagedToHost>(*ctx, to_host, static_cast<std::size_t>(chunk));
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

} // namespace xfer::cuda::managed

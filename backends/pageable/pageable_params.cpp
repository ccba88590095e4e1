#include "pageable_context.hpp"

#include "xfer_cuda/params.hpp"

namespace xfer::cuda::pageable {

const xfer_backend_param k_params[] = {
    {"staging_threads", "int", "8",
     "host threads for the staged pageable copy path (reserved for the staged path: not used yet)"},
    {"chunk_size", "size", "8MiB",
     "bytes per chunk of the staged pageable copy path (reserved for the staged path: not used yet)"},
};
const std::size_t k_param_count = sizeof k_params / sizeof k_params[0];

namespace {

xfer_status read_params(const xfer_backend_param_value *values, std::size_t count, PageableContext &ctx) noexcept {
    if (auto st = param_u64("pageable", values, count, "staging_threads", 8, 1, 256, &ctx.staging_threads)) {
        return st;
    }
    // One page at least (a smaller chunk can never pay for its synchronisation), 1 GiB at most
    // (the staging ring holds a few chunks of page-locked memory).
    return param_u64("pageable", values, count, "chunk_size", 8ull << 20, 4096, 1ull << 30, &ctx.chunk_size);
}

}  // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    auto ctx = std::make_unique<PageableContext>();
    if (auto st = read_params(values, count, *ctx)) {
        return st;
    }
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

}  // namespace xfer::cuda::pageable

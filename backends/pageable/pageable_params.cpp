#include "pageable_context.hpp"

#include "xfer_cuda/params.hpp"

namespace xfer::cuda::pageable {

const xfer_backend_param k_params[] = {
    {"staging_threads", "int", "8",
     "host threads that copy each chunk between pageable memory and the context's page-locked staging ring, "
     "the calling thread included; copies of 1 MiB and more between pageable and device memory are then "
     "pipelined (the host copies one chunk while the copy engine moves another). 0 turns staging off: every "
     "copy waits for its stream, then cudaMemcpyAsync reads or writes the pageable memory directly"},
    {"chunk_size", "size", "8MiB",
     "bytes per chunk of the staged copy path, and per slot of the staging ring (4 slots of page-locked memory, "
     "allocated at the context's first staged copy; if that fails, copies go the direct way). A copy smaller "
     "than two chunks is cut into two halves so that the two still overlap"},
};
const std::size_t k_param_count = sizeof k_params / sizeof k_params[0];

namespace {

xfer_status read_params(const xfer_backend_param_value *values, std::size_t count, PageableContext &ctx) noexcept {
    if (auto st = param_u64("pageable", values, count, "staging_threads", 8, 0, 256, &ctx.staging_threads)) {
        return st;
    }
    // One page at least (a smaller chunk can never pay for its synchronisation), 1 GiB at most
    // (the staging ring holds 4 chunks of page-locked memory).
    return param_u64("pageable", values, count, "chunk_size", 8ull << 20, 4096, 1ull << 30, &ctx.chunk_size);
}

}  // namespace

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    auto ctx = std::make_unique<PageableContext>();
    if (auto st = read_params(values, count, *ctx)) {
        return st;
    }
    if (ctx->staging_threads > 0) {
        // Nothing is allocated or started yet: that waits for the first staged copy.
        StagingConfig config;
        config.threads = static_cast<std::size_t>(ctx->staging_threads);
        config.chunk_size = static_cast<std::size_t>(ctx->chunk_size);
        ctx->staging = std::make_unique<PageableStager>(config);
    }
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

}  // namespace xfer::cuda::pageable

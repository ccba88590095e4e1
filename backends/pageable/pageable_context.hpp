// The pageable backend's context: a CUDA context plus its declared parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <xfer/xfer_backend.h>

#include "xfer_cuda/context.hpp"

namespace xfer::cuda::pageable {

struct PageableContext : Context {
    // Reserved for the staged path (a pinned staging ring fed by worker threads); this version
    // copies with cudaMemcpyAsync after waiting for the stream, so both are read and checked
    // but not yet used.
    std::uint64_t staging_threads = 8;
    std::uint64_t chunk_size = 8ull << 20;
};


// The declared parameters (name, type, default, help), for the plugin table.
extern const xfer_backend_param k_params[];
extern const std::size_t k_param_count;

// The backend's ContextFactory: a PageableContext with the effective values read and
// range-checked; XFER_ERROR_CONFIG naming the bad one. Runs inside context_create's guarded().
xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

}  // namespace xfer::cuda::pageable

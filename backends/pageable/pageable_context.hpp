// The pageable backend's context: a CUDA context plus its declared parameters.
#pragma once

#include <cstddef>
#include <cstdint>

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

// Reads and range-checks the effective values into `ctx`; XFER_ERROR_CONFIG naming the bad one.
xfer_status read_params(const xfer_backend_param_value *values, std::size_t count, PageableContext &ctx) noexcept;

}  // namespace xfer::cuda::pageable

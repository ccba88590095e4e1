// The pageable backend's context: a CUDA context plus its declared parameters and the staged
// copy path they configure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <xfer/xfer_backend.h>

#include "xfer_cuda/context.hpp"
#include "xfer_cuda/staged_copy.hpp"

namespace xfer::cuda::pageable {

struct PageableContext : Context {
    std::uint64_t staging_threads = 8;     // 0: staging off, every copy goes the direct way
    std::uint64_t chunk_size = 8ull << 20;
    std::unique_ptr<PageableStager> staging;  // nullptr when staging_threads is 0

    PageableStager *stager() const noexcept override { return staging.get(); }
    xfer_status close() noexcept override { return staging ? staging->close() : XFER_SUCCESS; }
};

// The declared parameters (name, type, default, help), for the plugin table.
extern const xfer_backend_param k_params[];
extern const std::size_t k_param_count;

// The backend's ContextFactory: a PageableContext with the effective values read and
// range-checked; XFER_ERROR_CONFIG naming the bad one. Runs inside context_create's guarded().
xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

}  // namespace xfer::cuda::pageable

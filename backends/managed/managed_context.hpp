// SPDX-License-Identifier: Apache-2.0
// The managed backend's context: a CUDA context with the to-host method its parameters choose.
#pragma once

#include <cstddef>
#include <memory>

#include "managed_to_host.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::managed {

struct ManagedContext : Context {
    std::unique_ptr<ManagedToHost> mover;
    xfer_status close() noexcept override { return mover ? mover->close() : XFER_SUCCESS; }
};

extern const xfer_backend_param kParams[];
extern const std::size_t kParamCount;

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

} // namespace xfer::cuda::managed

// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: a copy between pageable host memory and device memory whose path the
// copy policy already chose (memcpy.cpp asked the registration cache before classifying).
#pragma once

#include "user_memory/copy_policy.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

// Carries out `plan` (staged or driver; never a registration: the cache did those): the staging
// engine (the context's hook) for a staged plan, or for a small copy to the device on a stream
// whose earlier work may still write host memory (the engine waits in stream order where the
// driver would need a stream wait); else cudaMemcpyAsync with the plan's reason.
xfer_status copy_pageable_planned(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                                  cudaStream_t stream, const user_memory::Decision &plan, const char *what) noexcept;

} // namespace xfer::cuda

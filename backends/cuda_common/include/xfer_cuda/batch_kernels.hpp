// SPDX-License-Identifier: Apache-2.0
// The kernel of a packed batch (batch_kernels.cu, compiled by nvcc into the CUDA backends;
// libxfer.so never sees it).
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

#include "batch_plan.hpp"

namespace xfer::cuda {

// Queues one kernel on `stream` that copies every entry of `entries` (device memory, `count`
// descriptors): one thread block per entry, 16-byte words where both pointers and the size
// allow, bytes otherwise. Reports a launch failure naming cudaLaunchKernel.
xfer_status launch_copy_entries(const PackedEntry *entries, std::size_t count, cudaStream_t stream) noexcept;

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// XFER_ALLOC_* hints -> cudaMemAdvise on a managed allocation.
#pragma once

#include <cstddef>

#include <xfer/xfer.h>

namespace xfer::cuda::managed {

// READ_MOSTLY -> cudaMemAdviseSetReadMostly; PREFER_DEVICE / PREFER_HOST ->
// cudaMemAdviseSetPreferredLocation with the device / the host (CUDA 13 cudaMemLocation form).
xfer_status apply_advice(void *ptr, std::size_t bytes, unsigned flags, int device) noexcept;

} // namespace xfer::cuda::managed

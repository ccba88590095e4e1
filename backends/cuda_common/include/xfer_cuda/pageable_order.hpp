// Keeping stream order for copies that touch pageable (not page-locked) host memory.
#pragma once

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

namespace xfer::cuda {

// The CUDA driver stages a copy from pageable memory when the copy is *called*, not when the
// stream reaches it; a host function or copy queued earlier on the stream that writes that
// memory would then be overtaken (stale bytes sent). xfer promises stream order, so before
// such a copy we wait for the stream's earlier work. Costs a stream sync only when pageable
// memory is involved.
xfer_status wait_before_pageable_copy(cudaStream_t stream) noexcept;

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// The pageable strategy's buffers: ordinary page-aligned host memory beside a cudaMalloc
// device view.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pageable {

// When a buffer copy returns under the declared default of `staging` ("sync": once the bytes are
// in host memory or queued for DMA, so the call may wait for the host side of a staged copy).
// The table's capabilities follow from it; pageable_params.cpp checks it against the declared
// default at compile time.
constexpr plugin::Completion kDefaultCompletion = plugin::Completion::may_wait;

extern const BufferStrategy kBuffers;

} // namespace xfer::cuda::pageable

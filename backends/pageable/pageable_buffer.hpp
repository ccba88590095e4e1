// SPDX-License-Identifier: Apache-2.0
// The pageable strategy's buffers: ordinary page-aligned host memory beside a cudaMalloc
// device view.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pageable {

// When a buffer copy returns: a staged copy returns at once (staging = async, the default), but
// a copy below staged_min_bytes goes the driver's way, and the driver's pageable copy may wait
// for the stream (to the host it always does), so the strategy does not promise
// XFER_CAP_ASYNC_COPY.
// The table's capabilities follow from it; pageable_params.cpp checks it against the declared
// default at compile time.
constexpr plugin::Completion kDefaultCompletion = plugin::Completion::may_wait;

extern const BufferStrategy kBuffers;

} // namespace xfer::cuda::pageable

// SPDX-License-Identifier: Apache-2.0
// The managed strategy's buffers: one cudaMallocManaged pointer for both views; copies are
// prefetches.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::managed {

extern const BufferStrategy kBuffers;

} // namespace xfer::cuda::managed

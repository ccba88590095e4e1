// SPDX-License-Identifier: Apache-2.0
// The pinned strategy's buffers: a page-locked host view beside a cudaMalloc device view.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pinned {

extern const BufferStrategy kBuffers;

} // namespace xfer::cuda::pinned

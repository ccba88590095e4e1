// SPDX-License-Identifier: Apache-2.0
// The pageable strategy's buffers: ordinary page-aligned host memory beside a cudaMalloc
// device view.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pageable {

extern const BufferStrategy k_buffers;

}  // namespace xfer::cuda::pageable

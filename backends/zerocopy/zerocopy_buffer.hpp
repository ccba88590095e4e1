// SPDX-License-Identifier: Apache-2.0
// The zero-copy strategy's buffers: mapped page-locked host memory the device reaches over the bus.
#pragma once

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::zerocopy {

extern const BufferStrategy kBuffers;

} // namespace xfer::cuda::zerocopy

// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

namespace xfer_test {

// A kernel that writes to address 0x10: cudaErrorIllegalAddress at the next synchronisation.
cudaError_t launch_illegal_write(cudaStream_t stream);
// A kernel whose assert() fails: cudaErrorAssert at the next synchronisation.
cudaError_t launch_failing_assert(cudaStream_t stream);

}  // namespace xfer_test

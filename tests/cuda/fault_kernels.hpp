// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cuda_runtime_api.h>

namespace xfer::test {

// A kernel that writes to address 0x10: cudaErrorIllegalAddress at the next synchronisation.
cudaError_t launch_illegal_write(cudaStream_t stream);
// The same write after spinning for about `microseconds` on the device: a fault that lands
// while other work (a staged copy) is under way.
cudaError_t launch_illegal_write_after(cudaStream_t stream, unsigned microseconds);
// A kernel whose assert() fails: cudaErrorAssert at the next synchronisation.
cudaError_t launch_failing_assert(cudaStream_t stream);

} // namespace xfer::test

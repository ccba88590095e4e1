// SPDX-License-Identifier: Apache-2.0
// Test kernels, launched on the cudaStream_t that xfer_stream_native hands out.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace xfer::test {

// p[i] ^= key for every byte.
cudaError_t launch_xor(void *p, std::size_t n, unsigned char key, cudaStream_t stream);
// Spins for `spin_ms` milliseconds of device time first (so work queued behind it, or on
// another stream, would visibly overtake it if ordering were broken), then p[i] ^= key.
cudaError_t launch_spin_then_xor(void *p, std::size_t n, unsigned char key, unsigned spin_ms, cudaStream_t stream);
// p[i] = value.
cudaError_t launch_fill(void *p, std::size_t n, unsigned char value, cudaStream_t stream);

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
// Kernels that break on purpose (the GPU fault tests): an illegal address and a failing
// device-side assert. Each leaves a sticky error in the CUDA context of its device.
#undef NDEBUG
#include <cassert>

#include "fault_kernels.hpp"

namespace {

__global__ void write_through(int *p) { *p = 42; }

__global__ void write_through_after(int *p, unsigned microseconds) {
    for (unsigned i = 0; i < microseconds; ++i) __nanosleep(1000);
    *p = 42;
}

__global__ void assert_zero(int value) { assert(value == 0); }

} // namespace

namespace xfer::test {

cudaError_t launch_illegal_write(cudaStream_t stream) {
    write_through<<<1, 1, 0, stream>>>(reinterpret_cast<int *>(0x10));
    return cudaGetLastError();
}

cudaError_t launch_illegal_write_after(cudaStream_t stream, unsigned microseconds) {
    write_through_after<<<1, 1, 0, stream>>>(reinterpret_cast<int *>(0x10), microseconds);
    return cudaGetLastError();
}

cudaError_t launch_failing_assert(cudaStream_t stream) {
    assert_zero<<<1, 1, 0, stream>>>(1);
    return cudaGetLastError();
}

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
#include "kernels.hpp"

namespace xfer::test {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

int blocks_for(std::size_t n) {
    const std::size_t blocks = (n + kThreads - 1) / kThreads;
    return blocks > kMaxBlocks ? kMaxBlocks : static_cast<int>(blocks == 0 ? 1 : blocks);
}

__device__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void xor_kernel(unsigned char *p, std::size_t n, unsigned char key) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        p[i] ^= key;
    }
}

__global__ void spin_then_xor_kernel(unsigned char *p, std::size_t n, unsigned char key, unsigned long long spin_ns) {
    const unsigned long long start = global_ns();
    while (global_ns() - start < spin_ns) {}
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        p[i] ^= key;
    }
}

__global__ void fill_kernel(unsigned char *p, std::size_t n, unsigned char value) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        p[i] = value;
    }
}

} // namespace

cudaError_t launch_xor(void *p, std::size_t n, unsigned char key, cudaStream_t stream) {
    xor_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<unsigned char *>(p), n, key);
    return cudaGetLastError();
}

cudaError_t launch_spin_then_xor(void *p, std::size_t n, unsigned char key, unsigned spin_ms, cudaStream_t stream) {
    spin_then_xor_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<unsigned char *>(p), n, key,
                                                                 spin_ms * 1000000ull);
    return cudaGetLastError();
}

cudaError_t launch_fill(void *p, std::size_t n, unsigned char value, cudaStream_t stream) {
    fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<unsigned char *>(p), n, value);
    return cudaGetLastError();
}

} // namespace xfer::test

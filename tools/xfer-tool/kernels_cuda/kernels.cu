// SPDX-License-Identifier: Apache-2.0
// CUDA versions of xfer-tool's workflow kernels (see xfer_tool_kernels.h).
#include <algorithm>
#include <cstdio>

#include <cuda_runtime.h>

#include "xfer_tool_kernels.h"

namespace {

constexpr int kThreads = 256;

// Grid-stride loops: enough blocks to fill the GPU, never more than the data needs.
unsigned blocks_for(size_t n) {
    size_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(blocks, 65535u * 16u)));
}

__global__ void sqrt_kernel(const float *in, float *out, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        out[i] = sqrtf(in[i]);
}

__global__ void vector_add_kernel(const float *a, const float *b, float *c, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        c[i] = a[i] + b[i];
}

__global__ void scale_kernel(float *data, size_t n, float factor) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        data[i] = data[i] * factor;
}

__global__ void gather_kernel(const float *in, float *out, size_t n, size_t stride) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        out[i] = in[xfer_tool_gather_index(i, n, stride)] + 1.0f;
}

// The launch result; cudaGetLastError also clears a sticky launch error for the next call.
int launched() { return static_cast<int>(cudaGetLastError()); }

} // namespace

extern "C" {

int xfer_tool_kernels_abi(void) { return XFER_TOOL_KERNELS_ABI; }

const char *xfer_tool_cuda_error_string(int code) {
    // One buffer per thread: the string must outlive the call without the caller freeing it.
    static thread_local char text[256];
    cudaError_t err = static_cast<cudaError_t>(code);
    std::snprintf(text, sizeof text, "%s: %s (%d)", cudaGetErrorName(err), cudaGetErrorString(err), code);
    return text;
}

int xfer_tool_sqrt(int device, const float *in, float *out, size_t n, void *stream) {
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return static_cast<int>(err);
    sqrt_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n);
    return launched();
}

int xfer_tool_vector_add(int device, const float *a, const float *b, float *c, size_t n, void *stream) {
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return static_cast<int>(err);
    vector_add_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b, c, n);
    return launched();
}

int xfer_tool_scale(int device, float *data, size_t n, float factor, void *stream) {
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return static_cast<int>(err);
    scale_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(data, n, factor);
    return launched();
}

int xfer_tool_gather(int device, const float *in, float *out, size_t n, size_t stride, void *stream) {
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return static_cast<int>(err);
    gather_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n, stride);
    return launched();
}

} // extern "C"

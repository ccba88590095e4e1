// SPDX-License-Identifier: Apache-2.0
#include <cstdint>

#include "batch.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda {
namespace {

constexpr unsigned kThreads = 256;
// Enough blocks to fill an H200 (132 SMs x 16 resident blocks) several times; more entries are
// taken grid-stride.
constexpr std::size_t kMaxBlocks = 8192;

__global__ void copy_entries(const PackedEntry *entries, std::size_t count) {
    for (std::size_t e = blockIdx.x; e < count; e += gridDim.x) {
        const PackedEntry entry = entries[e];
        auto *dst = reinterpret_cast<unsigned char *>(entry.dst);
        const auto *src = reinterpret_cast<const unsigned char *>(entry.src);
        const std::uint64_t bytes = entry.bytes;
        std::uint64_t done = 0;
        if (((entry.dst | entry.src) & 15u) == 0) {
            const std::uint64_t words = bytes / 16;
            auto *d = reinterpret_cast<uint4 *>(dst);
            const auto *s = reinterpret_cast<const uint4 *>(src);
            for (std::uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
                d[i] = s[i];
            }
            done = words * 16;
        } else if (((entry.dst | entry.src) & 7u) == 0) {
            const std::uint64_t words = bytes / 8;
            auto *d = reinterpret_cast<std::uint64_t *>(dst);
            const auto *s = reinterpret_cast<const std::uint64_t *>(src);
            for (std::uint64_t i = threadIdx.x; i < words; i += blockDim.x) {
                d[i] = s[i];
            }
            done = words * 8;
        }
        for (std::uint64_t i = done + threadIdx.x; i < bytes; i += blockDim.x) {
            dst[i] = src[i];
        }
    }
}

} // namespace

xfer_status launch_copy_entries(const PackedEntry *entries, std::size_t count, cudaStream_t stream) noexcept {
    const std::size_t blocks = count < kMaxBlocks ? count : kMaxBlocks;
    copy_entries<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(entries, count);
    return check(cudaGetLastError(), "cudaLaunchKernel(xfer packed batch: %zu entries, %zu blocks)", count, blocks);
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "pinned_buffer.hpp"

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pinned {
namespace {

xfer_status allocate_page_locked(std::size_t bytes, void **host) {
    return check(cudaHostAlloc(host, bytes, cudaHostAllocDefault), "cudaHostAlloc(%zu bytes, cudaHostAllocDefault)",
                 bytes);
}

xfer_status free_page_locked(void *host, std::size_t bytes) {
    return check(cudaFreeHost(host), "cudaFreeHost(%zu bytes)", bytes);
}

const HostAllocator kPageLocked{allocate_page_locked, free_page_locked};

} // namespace

// Page-locked memory is what the copy engine reads and writes directly: plain
// cudaMemcpyAsync is truly asynchronous and keeps stream order.
constexpr BufferStrategy kBuffers = separate_views<kPageLocked>(dma_copy_between_views, plugin::Completion::queued);
static_assert(caps_of(kBuffers) == XFER_CAP_ASYNC_COPY, "pinned: two views, DMA queued on the stream");

} // namespace xfer::cuda::pinned

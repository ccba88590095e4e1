#include "pageable_buffer.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "xfer_cuda/pageable_order.hpp"
#include "xfer_cuda/separate_views.hpp"
#include "xfer_cuda/services.hpp"
#include "xfer_cuda/staged_copy.hpp"

namespace xfer::cuda::pageable {
namespace {

std::size_t page_size() {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

// Page-aligned, so chunks of the staged path (page multiples) start on page boundaries, as
// the driver's own staging does; malloc-class memory otherwise (never registered with CUDA).
xfer_status allocate_page_aligned(std::size_t bytes, void **host) {
    const int err = posix_memalign(host, page_size(), bytes);
    if (err != 0) {
        *host = nullptr;
        return fail(err == ENOMEM ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                    "posix_memalign(%zu bytes, page-aligned host view): %s", bytes, std::strerror(err));
    }
    return XFER_SUCCESS;
}

xfer_status free_page_aligned(void *host, std::size_t /*bytes*/) {
    std::free(host);
    return XFER_SUCCESS;
}

const HostAllocator k_page_aligned{allocate_page_aligned, free_page_aligned};

xfer_status copy_in_stream_order(const Context &c, const Buffer &b, xfer_direction dir, std::size_t offset,
                                 std::size_t bytes, cudaStream_t s) {
    // Copies of 1 MiB and more go through the staging ring (staged_copy.hpp), which keeps
    // stream order the same way as below before it touches the host view.
    if (PageableStager *stager = c.stager(); stager != nullptr && stager->takes(bytes)) {
        unsigned char *host = static_cast<unsigned char *>(b.host) + offset;
        unsigned char *device = static_cast<unsigned char *>(b.device) + offset;
        return dir == XFER_TO_DEVICE ? stager->to_device(device, host, bytes, s) : stager->to_host(host, device, bytes, s);
    }
    // The direct path. The driver reads (H2D) or may write (D2H) pageable memory when the copy is called, not
    // when the stream reaches it: a host function or copy queued earlier on `s` that fills
    // this host range would be overtaken and stale bytes sent. Waiting for `s` first keeps
    // xfer's stream-order promise; it makes this copy synchronous with the host, which is
    // what a pageable copy costs anyway (caps: no XFER_CAP_ASYNC_COPY).
    if (auto st = wait_before_pageable_copy(s)) {
        return st;
    }
    return copy_between_views(b, dir, offset, bytes, s, "pageable");
}

}  // namespace

const BufferStrategy k_buffers = separate_views<k_page_aligned>(copy_in_stream_order);

}  // namespace xfer::cuda::pageable

// SPDX-License-Identifier: Apache-2.0
#include "pageable_buffer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::pageable {
namespace {

std::size_t page_size() {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

// Page-aligned, so staged chunks start on page boundaries, as the driver's own staging does; and
// whole pages, so that no other allocation shares the view's last page: the registration cache
// page-locks a view copied again (whole pages), which must not reach into memory of the
// program's that its copies would then straddle. Malloc-class memory otherwise.
xfer_status allocate_page_aligned(std::size_t bytes, void **host) {
    const std::size_t page = page_size();
    if (bytes > SIZE_MAX - (page - 1)) {
        *host = nullptr;
        return fail(XFER_ERROR_OUT_OF_MEMORY, "posix_memalign(%zu bytes, page-aligned host view): too large", bytes);
    }
    const int err = posix_memalign(host, page, (bytes + page - 1) / page * page);
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

const HostAllocator kPageAligned{allocate_page_aligned, free_page_aligned};

// A buffer copy is a copy between pageable memory and device memory like any raw one: the
// staging engine takes it (or the driver, for small copies), in stream order either way.
xfer_status copy_in_stream_order(const Context &c, const Buffer &b, xfer_direction dir, std::size_t offset,
                                 std::size_t bytes, cudaStream_t s) {
    if (auto st = refuse_pageable_while_capturing(s, bytes, "a pageable buffer")) {
        return st;
    }
    return copy_pageable(c, static_cast<unsigned char *>(b.device) + offset,
                         static_cast<unsigned char *>(b.host) + offset, bytes, dir, s, "pageable");
}

} // namespace

// Separate views; a copy copies, and under the declared default of `staging` the call may wait
// for the host side of a staged copy: not XFER_CAP_ASYNC_COPY.
constexpr BufferStrategy kBuffers = separate_views<kPageAligned>(copy_in_stream_order, kDefaultCompletion);
static_assert(caps_of(kBuffers) == 0, "pageable: two views, copies that may wait on the host: no capability bit");

} // namespace xfer::cuda::pageable

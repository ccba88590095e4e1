// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: buffers other processes and communication libraries map
// (XFER_ALLOC_SHAREABLE, xfer_buffer_export / xfer_buffer_import).
//
// The device view is a CUDA virtual-memory allocation made as NCCL's zero-copy registration
// asks: cuMemCreate of pinned device memory with a POSIX file descriptor handle (and the fabric
// handle where the driver grants it), GPUDirect RDMA capable where the device supports it, its
// size rounded to the recommended granularity, reserved, mapped and made read-write for the
// device. Legacy cudaIpc handles would not do: they fail on virtual-memory and pool memory, and
// NCCL skips what is not cuMemCreate memory. The host view is a sealed memfd, page-locked with
// cudaHostRegister where the backend's copies are DMA.
//
// An export carries two descriptors (the memfd, the allocation's POSIX fd) and a payload that
// says the layout, both mapped sizes and the device's UUID; an import checks each of them
// before it maps anything.
#pragma once

#include <cstddef>

#include "xfer_cuda/buffer.hpp"

namespace xfer::cuda::shareable {

// Makes both views of b.bytes (set) into b: b.host, b.device and b.shared. On failure nothing
// is left allocated.
xfer_status allocate(const Context &ctx, HostSharing sharing, Buffer &b);

// Maps the memory an export describes into b (b.bytes set): payload and fds as export_views
// wrote them (fds borrowed). XFER_ERROR_INVALID_ARGUMENT naming what does not match.
xfer_status import_views(const Context &ctx, HostSharing sharing, const void *payload, std::size_t payload_bytes,
                         const int *fds, std::size_t fd_count, Buffer &b);

// Writes b's description and two new descriptors (the caller's to close).
xfer_status export_views(const Buffer &b, void *payload, std::size_t *payload_bytes, int *fds, std::size_t *fd_count);

// Unmaps and releases what allocate or import_views made, and deletes b.shared; the device is
// idle by then. This process's views go; the memory lives on while another process maps it.
xfer_status release(Buffer &b);

// Fills xfer_buffer_get_share_info's answer for any buffer of ctx: each view's memory kind and
// DLPack device, and for a shareable one its handle types, RDMA, granularity and mapped size.
void describe(const Context &ctx, const Buffer &b, xfer_share_info &info) noexcept;

} // namespace xfer::cuda::shareable

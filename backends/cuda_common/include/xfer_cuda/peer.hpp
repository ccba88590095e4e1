// SPDX-License-Identifier: Apache-2.0
// Peer copies between two devices (plugin ABI 1.2 entries, the same for every CUDA backend):
// cudaMemcpyPeerAsync with peer access enabled once per device pair where the hardware allows
// it; the driver stages through host memory where it does not.
#pragma once

#include <xfer/xfer_backend.h>

namespace xfer::cuda {

// cudaDeviceCanAccessPeer(ctx's device, peer's device).
xfer_status device_can_access_peer(void *ctx, void *peer, int *can_access);

// Raw form: both pointers are checked against their context's device before anything is
// queued (a pointer of another device, or pageable memory, is refused by name).
xfer_status memcpy_peer_async(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes,
                              void *stream_ctx, void *stream);

// Buffer form: the raw form on the two device views.
xfer_status buffer_copy_peer_async(void *dst_ctx, void *dst_buf, size_t dst_offset, void *src_ctx, void *src_buf,
                                   size_t src_offset, size_t bytes, void *stream_ctx, void *stream);

}  // namespace xfer::cuda

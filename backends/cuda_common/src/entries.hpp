// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: the plugin-table entries that are the same for every CUDA backend
// (plugin_table.cpp puts them into each backend's table), and the fence each one runs inside.
#pragma once

#include <string>

#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>
#include <xfer_plugin/errors.hpp>

namespace xfer::cuda {

using plugin::guarded;

// Nothing may throw across the plugin ABI: an entry runs its body inside guarded()
// (xfer_plugin/errors.hpp), or inside on_device() when it works on a context: guarded(), with
// the context's device bound first (activate) and the context handed to `body`, which takes a
// `const Context &`.
// The caller's own binding (its current context) is put back before the entry returns.
template <class Body>
xfer_status on_device(const char *entry, void *ctx, Body &&body) noexcept {
    return guarded(entry, [&] {
        const Context &c = as_context(ctx);
        CallerBinding binding;
        xfer_status st = activate(c, binding);
        if (st == XFER_SUCCESS) {
            st = body(c);
        }
        return binding.restore(st);
    });
}

// Streams (streams.cpp): non-blocking CUDA streams (cudaStreamCreateWithFlags(cudaStreamNonBlocking)),
// so they never serialise with the legacy default stream; the void* is the cudaStream_t itself.
xfer_status stream_create(void *ctx, void **stream);
xfer_status stream_destroy(void *ctx, void *stream);
xfer_status stream_synchronize(void *ctx, void *stream);
xfer_status stream_query(void *ctx, void *stream);
xfer_status stream_wait_event(void *ctx, void *stream, void *event);
xfer_status stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data);
void *stream_native(void *ctx, void *stream);
// The application's own streams: the void* is its cudaStream_t (cudaStreamLegacy for NULL);
// unwrapping waits for the stream as stream_destroy does and leaves the stream to its owner.
xfer_status stream_wrap(void *ctx, void *native, void **stream);
xfer_status stream_unwrap(void *ctx, void *stream);

// Events (streams.cpp): the void* is the cudaEvent_t itself.
xfer_status event_create(void *ctx, unsigned flags, void **event);
xfer_status event_destroy(void *ctx, void *event);
xfer_status event_record(void *ctx, void *event, void *stream);
xfer_status event_synchronize(void *ctx, void *event);
xfer_status event_query(void *ctx, void *event);
xfer_status event_elapsed_ms(void *ctx, void *start, void *end, float *ms);
void *event_native(void *ctx, void *event);

// Raw copies (memcpy.cpp) between any pointers the device can reach (cudaMemcpyAsync /
// cudaMemcpyBatchAsync, small batch entries packed: batch.hpp), keeping stream order for
// pageable host pointers too.
xfer_status memcpy_async(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind, void *stream);
xfer_status memcpy_batch_async(void *ctx, void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                               xfer_copy_kind kind, void *stream);

// xfer_register / xfer_unregister (registration.cpp, registration.hpp).
xfer_status register_memory(void *ctx, void *ptr, size_t bytes, unsigned flags);
xfer_status unregister_memory(void *ctx, void *ptr);
xfer_status registration_stats(void *ctx, xfer_registration_stats *stats);

// Peer copies between two devices (peer.cpp): cudaMemcpyPeerAsync with peer access enabled
// once per device pair where the hardware allows it; the driver stages through host memory
// where it does not.
// cudaDeviceCanAccessPeer(ctx's device, peer's device).
xfer_status device_can_access_peer(void *ctx, void *peer, int *can_access);
// Raw form: both pointers are checked against their context's device before anything is
// queued (a pointer of another device, or pageable memory, is refused by name).
xfer_status memcpy_peer_async(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes, void *stream_ctx,
                              void *stream);
// Buffer form: the raw form on the two device views.
xfer_status buffer_copy_peer_async(void *dst_ctx, void *dst_buf, size_t dst_offset, void *src_ctx, void *src_buf,
                                   size_t src_offset, size_t bytes, void *stream_ctx, void *stream);

// The device's description (device_info.cpp): cudaGetDeviceProperties, cudaMemGetInfo, the
// PCI bus id and the current PCIe link.
xfer_status device_info(void *ctx, xfer_device_info *info);

// The current PCIe link of a device. The CUDA runtime has no call for it, so it is read from
// Linux sysfs (current_link_speed / current_link_width of the device's PCI function).
struct PcieLink {
    int generation = 0; // 0 when unknown
    int width = 0;      // lanes, 0 when unknown
};
// "16.0 GT/s PCIe" -> 4; "2.5 GT/s" -> 1; unknown or malformed -> 0.
int pcie_generation_from_speed(const std::string &speed_text) noexcept;
// "16" -> 16; malformed -> 0.
int pcie_width_from_text(const std::string &width_text) noexcept;
// Reads /sys/bus/pci/devices/<bus_id lower-cased>/current_link_{speed,width}; zeros when the
// files cannot be read (containers, VMs, non-Linux).
PcieLink read_pcie_link(const std::string &bus_id, const std::string &sysfs_root = "/sys/bus/pci/devices") noexcept;

} // namespace xfer::cuda

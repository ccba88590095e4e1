// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/buffer.hpp"

#include "engine_copy.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda {

xfer_status allocate_device_first(const HostAllocator &host, Buffer &b) {
    if (auto st = check(cudaMalloc(&b.device, b.bytes), "cudaMalloc(%zu bytes)", b.bytes)) {
        return st;
    }
    if (auto st = host.allocate(b.bytes, &b.host)) {
        (void)cudaFree(b.device);
        b.device = nullptr;
        return st;
    }
    return XFER_SUCCESS;
}

xfer_status release_both_views(const HostAllocator &host, Buffer &b) {
    const xfer_status host_freed = host.release(b.host, b.bytes);
    const xfer_status device_freed = check(cudaFree(b.device), "cudaFree(%zu bytes)", b.bytes);
    return last_failure(host_freed, device_freed);
}

xfer_status copy_between_views(const Buffer &b, xfer_direction dir, std::size_t offset, std::size_t bytes,
                               cudaStream_t stream, const char *host_kind) {
    char *host = static_cast<char *>(b.host) + offset;
    char *device = static_cast<char *>(b.device) + offset;
    const char *sep = host_kind != nullptr ? ", " : "";
    const char *kind = host_kind != nullptr ? host_kind : "";
    if (dir == XFER_TO_DEVICE) {
        return check(engine_copy(device, host, bytes, cudaMemcpyHostToDevice, stream),
                     "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyHostToDevice%s%s%s)", bytes, offset, sep, kind,
                     host_kind != nullptr ? " source" : "");
    }
    return check(engine_copy(host, device, bytes, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync(%zu bytes at offset %zu, cudaMemcpyDeviceToHost%s%s%s)", bytes, offset, sep, kind,
                 host_kind != nullptr ? " destination" : "");
}

xfer_status dma_copy_between_views(const Context &, const Buffer &b, xfer_direction dir, std::size_t offset,
                                   std::size_t bytes, cudaStream_t stream) {
    if (auto st = plugin::take_path(XFER_PATH_PINNED_DMA, XFER_REASON_MEMORY, bytes)) {
        return st;
    }
    return copy_between_views(b, dir, offset, bytes, stream, nullptr);
}

} // namespace xfer::cuda

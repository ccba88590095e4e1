// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/pointer_memory.hpp"

#include <cuda_runtime_api.h>

namespace xfer::cuda {

Memory classify(const void *ptr) noexcept {
    cudaPointerAttributes attrs{};
    if (cudaPointerGetAttributes(&attrs, ptr) != cudaSuccess) {
        // Runtimes before CUDA 11 answered cudaErrorInvalidValue for memory they did not know.
        (void)cudaGetLastError();
        return Memory::pageable;
    }
    switch (attrs.type) {
    case cudaMemoryTypeHost:
        return Memory::pinned_host;
    case cudaMemoryTypeDevice:
        return Memory::device;
    case cudaMemoryTypeManaged:
        return Memory::managed;
    default:
        return Memory::pageable;
    }
}

const char *memory_name(Memory m) noexcept {
    switch (m) {
    case Memory::pageable:
        return "pageable host memory";
    case Memory::pinned_host:
        return "page-locked host memory";
    case Memory::device:
        return "device memory";
    default:
        return "managed memory";
    }
}

const char *kind_mismatch(xfer_copy_kind kind, Memory dst, Memory src) noexcept {
    const bool dst_device_side = kind == XFER_COPY_HOST_TO_DEVICE || kind == XFER_COPY_DEVICE_TO_DEVICE;
    const bool src_device_side = kind == XFER_COPY_DEVICE_TO_HOST || kind == XFER_COPY_DEVICE_TO_DEVICE;
    const bool dst_host_side = kind == XFER_COPY_DEVICE_TO_HOST || kind == XFER_COPY_HOST_TO_HOST;
    const bool src_host_side = kind == XFER_COPY_HOST_TO_DEVICE || kind == XFER_COPY_HOST_TO_HOST;
    if (dst_device_side && dst == Memory::pageable) {
        return "the destination is pageable host memory, which the device cannot address";
    }
    if (src_device_side && src == Memory::pageable) {
        return "the source is pageable host memory, which the device cannot address";
    }
    if (dst_host_side && dst == Memory::device) {
        return "the destination is device memory, not host memory";
    }
    if (src_host_side && src == Memory::device) {
        return "the source is device memory, not host memory";
    }
    return nullptr;
}

}  // namespace xfer::cuda

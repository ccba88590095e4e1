// SPDX-License-Identifier: Apache-2.0
// What memory a raw pointer points at, as far as a copy is concerned, and whether a copy kind
// fits the pointers.
#pragma once

#include <xfer/xfer.h>

namespace xfer::cuda {

enum class Memory {
    pageable,     // host memory CUDA does not know (malloc, new, stack): cudaMemoryTypeUnregistered
    pinned_host,  // page-locked host memory (cudaHostAlloc/cudaHostRegister), mapped on UVA systems
    device,       // cudaMalloc memory
    managed,      // cudaMallocManaged memory
};

Memory classify(const void *ptr) noexcept;
const char *memory_name(Memory m) noexcept;

// nullptr when a copy of `kind` may take `dst` and `src`; otherwise which side does not fit,
// e.g. "the destination is pageable host memory, which a device-side operand cannot be".
// Device-side operands may be device, managed or mapped (pinned) host memory: those are the
// device views of the CUDA backends. Host-side operands may be anything but cudaMalloc memory.
const char *kind_mismatch(xfer_copy_kind kind, Memory dst, Memory src) noexcept;

}  // namespace xfer::cuda

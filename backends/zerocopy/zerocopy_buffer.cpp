// SPDX-License-Identifier: Apache-2.0
#include "zerocopy_buffer.hpp"

#include "xfer_cuda/context.hpp"

namespace xfer::cuda::zerocopy {
namespace {

xfer_status allocate_mapped(const Context &, unsigned /*flags: managed-only hints, ignored*/, Buffer &b) {
    // The device view is derived from the host allocation, so here the host view comes first.
    if (auto st = check(cudaHostAlloc(&b.host, b.bytes, cudaHostAllocMapped),
                        "cudaHostAlloc(%zu bytes, cudaHostAllocMapped)", b.bytes)) {
        return st;
    }
    if (auto st =
            check(cudaHostGetDevicePointer(&b.device, b.host, 0), "cudaHostGetDevicePointer(%zu bytes)", b.bytes)) {
        (void)cudaFreeHost(b.host);
        b.host = nullptr;
        return st;
    }
    return XFER_SUCCESS;
}

xfer_status release_mapped(const Context &, Buffer &b) {
    return check(cudaFreeHost(b.host), "cudaFreeHost(%zu bytes, mapped)", b.bytes);
}

} // namespace

// One memory (mapped page-locked host memory) that the device reaches over the bus, and no copy
// function: nothing moves. Nothing needs queuing either: work queued on the stream before the
// copy call still runs before work queued after it, and device writes become visible to the
// host through the stream or event synchronisation the copy contract already asks for.
constexpr BufferStrategy kBuffers =
    strategy({plugin::Views::shared, plugin::Movement::none, plugin::Completion::queued}, allocate_mapped,
             release_mapped, nullptr);
static_assert(caps_of(kBuffers) == (XFER_CAP_SHARED_VIEW | XFER_CAP_NO_COPY), "zero-copy: one memory, nothing moves");

} // namespace xfer::cuda::zerocopy

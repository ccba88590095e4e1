// SPDX-License-Identifier: Apache-2.0
// Moving managed memory to the host faster than cudaMemPrefetchAsync: a prefetch to the host
// runs well below the link's rate (the driver migrates page by page and updates CPU page
// tables), while a DMA from device memory runs at it (measured: docs/performance.md, managed
// and zero-copy memory; the prefetch stays the default). Selected by the managed backend's `to_host`
// parameter so that both can be measured side by side:
//  - prefetch: cudaMemPrefetchAsync(range, host);
//  - dma: per chunk, a device-to-device copy of the range into a device slot, then
//    cudaMemDiscardAndPrefetchBatchAsync(range, host) (the pages move to the host without their
//    bytes: only page tables), then one DMA from the slot into the now host-resident pages;
//  - staged: per chunk, one DMA of the range into a page-locked slot, discard-and-prefetch to the
//    host, then a host function copies the slot into the pages (CUDA's callback thread, helped
//    by the context's host threads: copy_on_host_threads).
// Discarding is only done on whole 2 MiB blocks inside the range (device pages are up to 2 MiB;
// discarding part of one would lose bytes outside the range); the edges are prefetched.
// Everything is queued on the stream: the call returns at once, stream order holds.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>

#include <cuda_runtime_api.h>

#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::managed {

enum class ToHost { prefetch, dma, staged };

class ManagedToHost {
  public:
    // `owner`: the context (it outlives the mover and every copy it queued), whose host threads
    // help the staged method's host copies.
    ManagedToHost(const Context &owner, ToHost method, std::size_t chunk) noexcept
        : owner_(owner), method_(method), chunk_(chunk) {}
    ~ManagedToHost();
    ManagedToHost(const ManagedToHost &) = delete;
    ManagedToHost &operator=(const ManagedToHost &) = delete;

    ToHost method() const noexcept { return method_; }
    // Queues the move of [range, range + bytes) to the host on `s` (device current). Falls back
    // to the prefetch when the slots cannot be made.
    xfer_status to_host(char *range, std::size_t bytes, cudaStream_t s) noexcept;
    xfer_status close() noexcept;

    // Slots of the dma and staged methods, of one chunk each, used in turn.
    static constexpr std::size_t kSlots = 2;

  private:
    struct Slot {
        void *memory = nullptr; // device memory (dma) or page-locked host memory (staged)
        cudaEvent_t done = nullptr;
    };
    bool allocate() noexcept;
    xfer_status chunk(char *at, std::size_t n, cudaStream_t s) noexcept;

    const Context &owner_;
    ToHost method_;
    std::size_t chunk_;
    std::mutex mutex_;
    bool set_up_ = false, usable_ = false;
    std::array<Slot, kSlots> slots_{};
    std::size_t next_ = 0;
};

} // namespace xfer::cuda::managed

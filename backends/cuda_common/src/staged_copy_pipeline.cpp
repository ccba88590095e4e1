// The staged copies themselves: chunk by chunk through the ring, the host copy of one chunk
// overlapping the DMA of another.
#include <array>

#include "xfer_cuda/chunk_plan.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/pageable_order.hpp"
#include "xfer_cuda/staged_copy.hpp"

namespace xfer::cuda {
namespace {

// The slot's last DMA (queued by whichever copy used it before, on any stream) is done, so
// the host may fill it or a new DMA may overwrite it. Usually already true: slots are handed
// out least recently used first.
xfer_status wait_for_slot(StagingRing &ring, std::size_t slot) {
    return check(cudaEventSynchronize(ring.event(slot)), "cudaEventSynchronize (staging slot %zu: its previous DMA)",
                 slot);
}

// The slot stays busy for its next user until the DMA just queued on `stream` is done. If the
// record fails, the event still marks an earlier point, so the stream is waited for instead
// before the slot is given back: the next user must never overwrite it under a running DMA.
xfer_status protect_slot(StagingRing &ring, std::size_t slot, cudaStream_t stream) {
    const cudaError_t err = cudaEventRecord(ring.event(slot), stream);
    if (err == cudaSuccess) {
        return XFER_SUCCESS;
    }
    const xfer_status st = check(err, "cudaEventRecord (staging slot %zu after its DMA)", slot);
    (void)cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    return st;
}

// A chunk of a D2H copy whose DMA into its slot is queued.
struct InFlight {
    SlotLease lease;
    Span span;
    std::size_t index = 0;
};

}  // namespace

xfer_status PageableStager::to_device(void *device, const void *host, std::size_t bytes,
                                      cudaStream_t stream) noexcept {
    return guarded("staged copy to device", [&] {
        if (auto st = wait_before_pageable_copy(stream)) {
            return st;
        }
        StagingRing &ring = *ring_;
        auto *dst = static_cast<unsigned char *>(device);
        const auto *src = static_cast<const unsigned char *>(host);
        const std::size_t chunk = plan_chunk_bytes(bytes, ring.slot_bytes());
        const std::size_t n = span_count(bytes, chunk);
        for (std::size_t i = 0; i < n; ++i) {
            const Span c = nth_span(bytes, chunk, i);
            // One slot at a time, given back as soon as its DMA is queued: while the copy
            // engine moves this chunk, the next iteration fills another slot.
            SlotLease lease(ring.slots(), ring.slots().acquire());
            const std::size_t slot = lease.slot();
            if (auto st = wait_for_slot(ring, slot)) {
                return st;
            }
            pool_->copy(ring.host(slot), src + c.offset, c.bytes);
            if (auto st = check(cudaMemcpyAsync(dst + c.offset, ring.host(slot), c.bytes, cudaMemcpyHostToDevice,
                                                stream),
                                "cudaMemcpyAsync(chunk %zu of %zu: %zu bytes at offset %zu, cudaMemcpyHostToDevice "
                                "from staging slot %zu)",
                                i + 1, n, c.bytes, c.offset, slot)) {
                return st;
            }
            if (auto st = protect_slot(ring, slot, stream)) {
                return st;
            }
        }
        // Every byte has left `host` (it is in the ring or on the device): the caller may
        // reuse it now, though the last DMAs may still be running on `stream`.
        return XFER_SUCCESS;
    });
}

xfer_status PageableStager::to_host(void *host, const void *device, std::size_t bytes,
                                    cudaStream_t stream) noexcept {
    return guarded("staged copy to host", [&] {
        if (auto st = wait_before_pageable_copy(stream)) {
            return st;
        }
        StagingRing &ring = *ring_;
        auto *dst = static_cast<unsigned char *>(host);
        const auto *src = static_cast<const unsigned char *>(device);
        const std::size_t chunk = plan_chunk_bytes(bytes, ring.slot_bytes());
        const std::size_t n = span_count(bytes, chunk);
        // Oldest first; leases still held on an early return are given back with the array
        // (their events protect any DMA still filling them).
        std::array<InFlight, StagingRing::k_slots> queued;
        std::size_t head = 0;
        std::size_t count = 0;
        std::size_t next = 0;
        for (std::size_t done = 0; done < n; ++done) {
            // Keep the copy engine ahead of the host: queue the DMA of every chunk a slot is
            // free for. Only a thread holding no slot blocks for one (SlotQueue's deadlock rule).
            while (next < n && count < queued.size()) {
                std::size_t slot = 0;
                if (count == 0) {
                    slot = ring.slots().acquire();
                } else if (!ring.slots().try_acquire(&slot)) {
                    break;
                }
                InFlight &q = queued[(head + count) % queued.size()];
                q.lease = SlotLease(ring.slots(), slot);
                q.span = nth_span(bytes, chunk, next);
                q.index = next;
                ++count;
                ++next;
                if (auto st = wait_for_slot(ring, slot)) {
                    return st;
                }
                if (auto st = check(cudaMemcpyAsync(ring.host(slot), src + q.span.offset, q.span.bytes,
                                                    cudaMemcpyDeviceToHost, stream),
                                    "cudaMemcpyAsync(chunk %zu of %zu: %zu bytes at offset %zu, "
                                    "cudaMemcpyDeviceToHost into staging slot %zu)",
                                    q.index + 1, n, q.span.bytes, q.span.offset, slot)) {
                    return st;
                }
                if (auto st = protect_slot(ring, slot, stream)) {
                    return st;
                }
            }
            InFlight &q = queued[head];
            const std::size_t slot = q.lease.slot();
            if (auto st = check(cudaEventSynchronize(ring.event(slot)),
                                "cudaEventSynchronize (chunk %zu of %zu arriving in staging slot %zu)", q.index + 1, n,
                                slot)) {
                return st;
            }
            pool_->copy(dst + q.span.offset, ring.host(slot), q.span.bytes);
            q.lease.reset();
            head = (head + 1) % queued.size();
            --count;
        }
        return XFER_SUCCESS;
    });
}

}  // namespace xfer::cuda

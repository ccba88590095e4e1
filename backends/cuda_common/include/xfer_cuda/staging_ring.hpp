// A context's ring of page-locked staging slots, each with the event recorded after the last
// DMA that reads or writes it. The copy engine reads and writes page-locked memory directly at
// full link speed, which it cannot do with pageable memory.
#pragma once

#include <array>
#include <cstddef>

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

#include "slot_queue.hpp"

namespace xfer::cuda {

class StagingRing {
public:
    static constexpr std::size_t k_slots = SlotQueue::k_slots;

    explicit StagingRing(std::size_t slot_bytes) noexcept : slot_bytes_(slot_bytes) {}
    ~StagingRing();  // release() if the owner did not; failures are lost there
    StagingRing(const StagingRing &) = delete;
    StagingRing &operator=(const StagingRing &) = delete;

    // cudaHostAlloc of every slot and cudaEventCreateWithFlags(cudaEventDisableTiming) of its
    // event, with the device current. False when any of it fails: everything made so far is
    // freed, the runtime's last error is cleared and nothing is reported, because the caller
    // then copies the direct way (page-locked memory is a scarce resource, not a requirement).
    // Not thread-safe: the owner calls it once, under its own lock.
    bool allocate() noexcept;

    // Waits for each slot's last DMA (cudaEventSynchronize), then destroys the events and frees
    // the slots (cudaFreeHost). Reports every failure; returns the status of the last one.
    xfer_status release() noexcept;

    std::size_t slot_bytes() const noexcept { return slot_bytes_; }
    unsigned char *host(std::size_t slot) const noexcept { return memory_[slot]; }
    cudaEvent_t event(std::size_t slot) const noexcept { return events_[slot]; }
    SlotQueue &slots() noexcept { return queue_; }

private:
    std::size_t slot_bytes_;
    bool allocated_ = false;
    std::array<unsigned char *, k_slots> memory_{};
    std::array<cudaEvent_t, k_slots> events_{};
    SlotQueue queue_;
};

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// A context's engine for packed batches (batch_plan.hpp says what is packed and why): two
// staging slots, each page-locked host memory + device memory + an event, made at the first
// packed batch and reused.
//
// Stream order without blocking the caller: nothing on the host touches user memory or a slot
// at call time. Each group is queued as
//   wait(slot event) -> host function: write descriptors (+ gather sources) into the slot ->
//   DMA slot to device -> kernel -> [DMA data back -> host function: scatter] -> record(slot event)
// so the host work runs when the stream reaches it (after earlier work wrote the sources), and
// a slot's next user (any stream) waits on the GPU for its previous group, not on the host.
// The host functions only memcpy (no CUDA call); they run on CUDA's callback thread, which
// starts up to batch_host_threads - 1 helper threads for a group of 1 MiB or more and joins
// them. The host part of staged groups of all streams is serialised on that thread: a measured
// trade-off against blocking the caller. Mapped routes need no host copy at all.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>

#include <cuda_runtime_api.h>
#include <xfer/xfer_backend.h>

#include "batch_plan.hpp"

namespace xfer::cuda {

class BatchPacker {
public:
    static constexpr std::size_t k_slots = 2;

    BatchPacker(std::size_t max_entry, std::size_t slot_bytes, std::size_t host_threads) noexcept;
    ~BatchPacker();
    BatchPacker(const BatchPacker &) = delete;
    BatchPacker &operator=(const BatchPacker &) = delete;

    // The packing configuration, with the slots made now if this is the first call (device
    // current). max_entry 0 (packing off) when the slots cannot be made: nothing is reported,
    // the copy engine takes every entry.
    PackConfig config() noexcept;

    // Queues the packed groups of `plan` on `stream` (see above). Failures name the call.
    xfer_status queue(const BatchPlan &plan, void *const *dsts, const void *const *srcs, const std::size_t *sizes,
                      cudaStream_t stream);

    // Waits for the slots' last groups and frees them; at context_destroy.
    xfer_status close() noexcept;

private:
    struct Slot {
        unsigned char *host = nullptr;    // cudaHostAlloc
        unsigned char *device = nullptr;  // cudaMalloc
        cudaEvent_t done = nullptr;       // recorded after the slot's last group
    };
    bool allocate() noexcept;  // under mutex_
    xfer_status queue_group(const Group &g, const BatchPlan &plan, void *const *dsts, const void *const *srcs,
                            const std::size_t *sizes, cudaStream_t stream);

    std::size_t max_entry_;
    std::size_t slot_bytes_;
    std::size_t host_threads_;  // batch_host_threads
    std::mutex mutex_;
    bool set_up_ = false;
    bool usable_ = false;
    bool mapped_host_ = false;
    std::array<Slot, k_slots> slots_{};
    std::size_t next_ = 0;
};

// The batch parameters every CUDA backend declares after its own (backend.hpp adds them).
extern const xfer_backend_param k_batch_params[];
extern const std::size_t k_batch_param_count;

// Reads them and makes ctx.packer (nullptr when batch_pack_max is 0); CONFIG naming the bad one.
struct Context;
xfer_status read_batch_params(const char *backend, const xfer_backend_param_value *values, std::size_t count,
                              Context &ctx) noexcept;

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: packed batches of small copies (xfer_memcpy_batch_async), in three
// parts: the plan (batch_plan.cpp: which entries are packed, by which route, where each sits in
// a slot; pure arithmetic, unit-tested without a device), the packer (packed_batch.cpp: the
// slots and the queued work) and the kernel (batch_kernels.cu).
//
// The plan: how xfer_memcpy_batch_async packs small copies: which entries are packed, by which route,
// and where each one sits in a staging slot. Pure arithmetic on sizes and memory kinds, so it
// is unit-tested without a device (tests/cuda, cuda_unit).
//
// Why pack: the copy engine costs a fixed time per entry whatever its size (also inside
// cudaMemcpyBatchAsync), so 4096 copies of 4 KiB take many times longer than one 16 MiB copy
// (measured: docs/performance.md, batches of small copies).
// A packed group is one DMA plus one kernel (batch_kernels.cu) that gathers or scatters every
// entry, one thread block each:
//  - staged_to_device: the pageable sources are gathered into a page-locked slot (during the
//    call, or by a host function in stream order: below), one DMA moves slot + descriptors,
//    the kernel scatters to the destinations;
//  - staged_to_host: the kernel gathers into the device slot, one DMA to the page-locked slot,
//    then a host function scatters to the pageable destinations, in stream order;
//  - mapped_to_device / mapped_to_host: the host side is page-locked and mapped (cudaHostAlloc,
//    xfer_register), so the kernel reads or writes it directly over the link: no staging at all.
// Entries larger than the pack threshold, and every other pair of memories (device to device,
// managed, host to host), keep going to the copy engine.
//
// The packer: a context's engine for packed batches (the plan says what is packed and why): two
// staging slots, each page-locked host memory + device memory + an event, made at the first
// packed batch and reused.
//
// Stream order. Each group is queued as
//   wait(slot event) -> host function: write descriptors (+ gather sources) into the slot ->
//   DMA slot to device -> kernel -> [DMA data back -> host function: scatter] -> record(slot event)
// so the host work runs when the stream reaches it (after earlier work wrote the sources), and
// a slot's next user (any stream) waits on the GPU for its previous group, not on the host.
// Except groups to the device when no earlier work on the stream may still write host memory
// (xfer's copies to the host, xfer host functions: HostWriteTracker), the rule cudaMemcpyAsync
// and xfer_memcpy_async follow for pageable sources: those are gathered during the call, into a
// slot whose previous group is done (polled for; after kSlotWait the group goes the host-function
// way, so a slot held by a stream that waits for the caller cannot block it), then DMA, kernel,
// event. Why (docs/performance.md, batches of small copies): a host function's gather runs after
// the stream reached it and holds the stream meanwhile, so gathers and DMAs take turns; gathered
// during the call, group k+1's gather overlaps group k's DMA and no host function wakes up.
// Gathers write with non-temporal stores (dma_staging_copy.hpp): the DMA that follows reads
// non-temporally written slots near the link's rate, freshly memcpy'd ones well below it.
// The host copies (gather, scatter) are shared among the calling or callback thread and up to
// batch_host_threads - 1 helper threads of the packer (256 KiB at least each), in 128 KiB blocks
// that whichever thread is free takes next (host_copy_team.hpp); for gathers during the call the
// helpers are woken before the plan is made and serve every group of the batch. Mapped routes
// need no host copy at all. The packer's lock is held while a call gathers: batches of one
// context from several threads are gathered one after another (contexts do not share a packer).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace boost::asio {
class thread_pool;
}

namespace xfer::cuda {

class HostCopyTeam;

// ------------------------------------------------------------------------ the plan
enum class Route : std::uint8_t { engine, staged_to_device, mapped_to_device, staged_to_host, mapped_to_host };

// What one packed entry is to the kernel: absolute addresses the device can reach.
struct PackedEntry {
    std::uint64_t dst;
    std::uint64_t src;
    std::uint64_t bytes;
};

// Packed data offsets are multiples of this, so the kernel moves 16-byte words when the user's
// pointers allow it.
constexpr std::size_t kPackAlignment = 16;
// The data area of a slot starts after the descriptors, rounded to this.
constexpr std::size_t kDescriptorAlignment = 256;

struct PackConfig {
    std::size_t max_entry = 0;  // entries up to this many bytes are packed; 0: packing off
    std::size_t slot_bytes = 0; // descriptors + data of one group
    bool mapped_host = false;   // the device reaches page-locked host memory at its host address
};

// The route of one entry. Entries above max_entry, and pairs of memories a kernel should not
// gather (managed: migrations; device to device: the copy engine or the application's own
// kernels do it as fast), go to the engine.
Route route_for(Memory dst, Memory src, std::size_t bytes, const PackConfig &config) noexcept;

// Bytes the descriptors of `count` entries take at the start of a slot.
std::size_t descriptor_bytes(std::size_t count) noexcept;

struct Placement {
    std::size_t index = 0;  // entry of the batch
    std::size_t offset = 0; // in the slot's data area (staged routes; 0 for mapped ones)
};

// One DMA + one kernel: entries [first, first + count) of BatchPlan::placed, all of one route.
struct Group {
    Route route = Route::engine;
    std::size_t first = 0;
    std::size_t count = 0;
    std::size_t data_bytes = 0; // staged routes: bytes of the data area used
};

struct BatchPlan {
    std::vector<std::size_t> engine; // entries for the copy engine, in batch order
    std::vector<Placement> placed;
    std::vector<Group> groups;
};

// Groups the packed entries by route (in batch order within a route) so that descriptors and
// data of each group fit in config.slot_bytes. Requires every packed entry to fit an empty slot
// (read_batch_params keeps max_entry at most a quarter of slot_bytes).
BatchPlan plan_batch(const Route *routes, const std::size_t *sizes, std::size_t count, const PackConfig &config);

// ---------------------------------------------------------------------- the kernel
// Queues one kernel on `stream` that copies every entry of `entries` (device memory, `count`
// descriptors): one thread block per entry, 16-byte words where both pointers and the size
// allow, bytes otherwise. Reports a launch failure naming cudaLaunchKernel.
xfer_status launch_copy_entries(const PackedEntry *entries, std::size_t count, cudaStream_t stream) noexcept;

// ---------------------------------------------------------------------- the packer
class BatchPacker {
  public:
    static constexpr std::size_t kSlots = 2;

    // `pool`: the context's host threads (they outlive the packer), whose helpers gathers and
    // scatters borrow, at most host_threads - 1 at once.
    BatchPacker(std::size_t max_entry, std::size_t slot_bytes, std::size_t host_threads, HostPool *pool) noexcept;
    ~BatchPacker();
    BatchPacker(const BatchPacker &) = delete;
    BatchPacker &operator=(const BatchPacker &) = delete;

    // The packing configuration, with the slots made now if this is the first call (device
    // current). max_entry 0 (packing off) when the slots cannot be made: nothing is reported,
    // the copy engine takes every entry.
    PackConfig config() noexcept;

    // Queues the packed groups of `plan` on `stream` (see above). `host_writes`: the context's
    // record of queued work that may still write host memory: when none is on `stream`, pageable
    // sources of groups to the device are gathered during the call; scatters into pageable
    // memory are entered in it until they have run. Failures name the call.
    // `team`: the batch's gather team (start_team), or nullptr (each group wakes its own).
    xfer_status queue(const BatchPlan &plan, void *const *dsts, const void *const *srcs, const std::size_t *sizes,
                      cudaStream_t stream, HostWriteTracker &host_writes, HostCopyTeam *team);

    // Wakes the helper threads that gathering `gather_bytes` (the batch's staged_to_device
    // entries) wants, so that they are awake by the time queue() gathers (host_copy_team.hpp);
    // nullptr when that is too little to share, or no helper can be had. Call before planning:
    // waking a helper takes tens of microseconds.
    std::unique_ptr<HostCopyTeam> start_team(std::size_t gather_bytes) noexcept;

    // Waits for the slots' last groups and frees them; at context_destroy.
    xfer_status close() noexcept;

  private:
    struct Slot {
        unsigned char *host = nullptr;   // cudaHostAlloc
        unsigned char *device = nullptr; // cudaMalloc
        cudaEvent_t done = nullptr;      // recorded after the slot's last group
    };
    // How long a group gathered during the call waits for its slot's previous group (many times
    // the DMA of a full slot) before it is queued the stream-ordered way instead: the
    // previous group may sit on a stream held by work that only the caller can release.
    static constexpr std::chrono::milliseconds kSlotWait{5};

    bool allocate() noexcept; // under mutex_
    xfer_status queue_group(const Group &g, const BatchPlan &plan, void *const *dsts, const void *const *srcs,
                            const std::size_t *sizes, cudaStream_t stream, bool gather_now,
                            HostWriteTracker &host_writes, HostCopyTeam *team);
    // *free: the slot's last group is done (polled for at most kSlotWait).
    static xfer_status wait_for_slot(const Slot &slot, bool *free) noexcept;
    // The upload of the slot (descriptors, and gathered data to the device) and the kernel.
    static xfer_status queue_upload_and_kernel(const Slot &slot, const Group &g, std::size_t desc,
                                               cudaStream_t stream) noexcept;
    // The same, then the slot's event.
    static xfer_status queue_device_side(const Slot &slot, const Group &g, std::size_t desc,
                                         cudaStream_t stream) noexcept;

    std::size_t max_entry_;
    std::size_t slot_bytes_;
    std::size_t host_threads_; // batch_host_threads
    std::mutex mutex_;
    bool set_up_ = false;
    bool usable_ = false;
    bool mapped_host_ = false;
    std::array<Slot, kSlots> slots_{};
    std::size_t next_ = 0;
    // At most batch_host_threads - 1 threads of the context's pool take shares of a group's host
    // copies (started with the pool; none if the system refused them, or batch_host_threads 1).
    boost::asio::thread_pool *helpers() noexcept;
    HostPool *pool_;
};

// The batch values every CUDA backend derives after its own (with_common_derived adds them):
// declared defaults unless the user sets one.
extern const xfer_backend_param kBatchDerived[];
extern const std::size_t kBatchDerivedCount;

// Reads them (batch_host_threads at most `host_threads`), notes them in ctx.derived_values and
// makes ctx.packer (nullptr when batch_pack_max is 0); CONFIG naming the bad one.
xfer_status read_batch_params(const char *backend, const xfer_backend_param_value *values, std::size_t count,
                              std::size_t host_threads, Context &ctx) noexcept;

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// How xfer_memcpy_batch_async packs small copies: which entries are packed, by which route,
// and where each one sits in a staging slot. Pure arithmetic on sizes and memory kinds, so it
// is unit-tested without a device (tests/cuda, cuda_unit).
//
// Why pack: the copy engine costs ~1.7 us per entry on an H200 whatever its size (also inside
// cudaMemcpyBatchAsync), so 4096 copies of 4 KiB take ~7 ms where one 16 MiB copy takes 0.3 ms.
// A packed group is one DMA plus one kernel (batch_kernels.cu) that gathers or scatters every
// entry, one thread block each:
//  - staged_to_device: a host function gathers the pageable sources into a page-locked slot in
//    stream order, one DMA moves slot + descriptors, the kernel scatters to the destinations;
//  - staged_to_host: the kernel gathers into the device slot, one DMA to the page-locked slot,
//    then a host function scatters to the pageable destinations, in stream order;
//  - mapped_to_device / mapped_to_host: the host side is page-locked and mapped (cudaHostAlloc,
//    xfer_register), so the kernel reads or writes it directly over the link: no staging at all.
// Entries larger than the pack threshold, and every other pair of memories (device to device,
// managed, host to host), keep going to the copy engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pointer_memory.hpp"

namespace xfer::cuda {

enum class Route : std::uint8_t { engine, staged_to_device, mapped_to_device, staged_to_host, mapped_to_host };

// What one packed entry is to the kernel: absolute addresses the device can reach.
struct PackedEntry {
    std::uint64_t dst;
    std::uint64_t src;
    std::uint64_t bytes;
};

// Packed data offsets are multiples of this, so the kernel moves 16-byte words when the user's
// pointers allow it.
constexpr std::size_t k_pack_alignment = 16;
// The data area of a slot starts after the descriptors, rounded to this.
constexpr std::size_t k_descriptor_alignment = 256;

struct PackConfig {
    std::size_t max_entry = 0;   // entries up to this many bytes are packed; 0: packing off
    std::size_t slot_bytes = 0;  // descriptors + data of one group
    bool mapped_host = false;    // the device reaches page-locked host memory at its host address
};

// The route of one entry. Entries above max_entry, and pairs of memories a kernel should not
// gather (managed: migrations; device to device: the copy engine or the application's own
// kernels do it as fast), go to the engine.
Route route_for(Memory dst, Memory src, std::size_t bytes, const PackConfig &config) noexcept;

// Bytes the descriptors of `count` entries take at the start of a slot.
std::size_t descriptor_bytes(std::size_t count) noexcept;

struct Placement {
    std::size_t index = 0;   // entry of the batch
    std::size_t offset = 0;  // in the slot's data area (staged routes; 0 for mapped ones)
};

// One DMA + one kernel: entries [first, first + count) of BatchPlan::placed, all of one route.
struct Group {
    Route route = Route::engine;
    std::size_t first = 0;
    std::size_t count = 0;
    std::size_t data_bytes = 0;  // staged routes: bytes of the data area used
};

struct BatchPlan {
    std::vector<std::size_t> engine;  // entries for the copy engine, in batch order
    std::vector<Placement> placed;
    std::vector<Group> groups;
};

// Groups the packed entries by route (in batch order within a route) so that descriptors and
// data of each group fit in config.slot_bytes. Requires every packed entry to fit an empty slot
// (read_batch_params keeps max_entry at most a quarter of slot_bytes).
BatchPlan plan_batch(const Route *routes, const std::size_t *sizes, std::size_t count, const PackConfig &config);

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// What xfer's own buffers are, so that a copy between pointers inside them is classified
// without asking the driver.
//
// Why: cudaPointerGetAttributes costs a driver call per pointer, and a raw copy classifies both
// of its pointers (the kind check, the pageable routes): asked on every call, that is most of
// what a small xfer_memcpy_async costs over the raw cudaMemcpyAsync (measured:
// docs/performance.md, per-call overhead of a small copy). Each view of a buffer is classified once, by the driver, when the buffer is
// allocated, and the answer kept with the view's extent until the buffer is released.
//
// Only xfer's own allocations are kept: memory xfer did not allocate (the user's cudaMalloc or
// malloc) can be freed and its addresses reused behind xfer's back, so such pointers are still
// asked about on every call. A view registered or unregistered with xfer_register (which
// changes what the driver says of it) is forgotten and asked about from then on.
//
// Thread-safety: all functions may be called from any thread. Lookups read a small per-thread
// cache first (no lock, no atomic read-modify-write); a generation counter bumped by every
// removal empties the caches, so a released extent is never answered from one.
#pragma once

#include <cstddef>

#include "recent_extents.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda::known_memory {

// Remembers [start, start + bytes) as memory `m` (a view of a new buffer). Keeps nothing when
// memory runs short: lookups then ask the driver, as for foreign memory.
void add(const void *start, std::size_t bytes, Memory m) noexcept;

// Forgets the extent that starts at `start` (a view about to be released).
void remove(const void *start) noexcept;

// Forgets every extent that overlaps [start, start + bytes) (its memory was just registered or
// unregistered with the driver).
void forget_overlapping(const void *start, std::size_t bytes) noexcept;

// True with *m set when `ptr` lies in a remembered extent.
bool find(const void *ptr, Memory *m) noexcept;

// find() for a copy's two pointers with one look at the thread's cache (a plugin reaches a
// thread-local through a call): `known` says which lie in a remembered extent, and each
// memory is set where it does.
struct PairAnswer {
    bool dst_known = false, src_known = false;
    Memory dst = Memory::pageable, src = Memory::pageable;
};
PairAnswer find_pair(const void *dst, const void *src) noexcept;

// True with *e set to the remembered extent holding `ptr`. The answer holds until the extent's
// buffer is released: a caller may keep it for the span of one call (a batch's classifier).
bool find_extent(const void *ptr, Extent *e) noexcept;

} // namespace xfer::cuda::known_memory

// SPDX-License-Identifier: Apache-2.0
// Moving freshly written staging memory out of the writing core's own caches before a DMA
// reads it.
//
// Why: a worker's memcpy leaves a piece's lines modified in its core's L1/L2; a DMA that reads
// them right after has every line fetched from that core, and runs well below the link's rate
// (a CUPTI timeline; measured: docs/performance.md, pageable copies). `cldemote` (a hint,
// Sapphire Rapids on) moves a line to the shared cache, from where the DMA reads it without a
// core in the way. Not non-temporal stores: they put the chunk in memory, which the filling
// loads at the same time.
#pragma once

#include <cstddef>

namespace xfer::cuda::pageable {

// Hints the CPU to move the cache lines holding [p, p + bytes), from the one holding p to the
// one holding the last byte, from this core's caches to the shared cache. Nothing is written or
// read; on CPUs without the instruction (its encoding is a no-op there), off x86-64 and with
// compilers that do not know it, it does nothing.
void demote_from_core_caches(const void *p, std::size_t bytes) noexcept;

} // namespace xfer::cuda::pageable

// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: copying into page-locked staging memory that a DMA reads right after
// (a packed batch's gather, batch.hpp).
//
// Why not memcpy: memcpy's ordinary stores leave the staged bytes dirty in the writing cores'
// own caches, and a DMA reading such lines is slow: the DMA after a memcpy'd gather runs well
// below the link's rate, after a non-temporal one close to it (a CUPTI timeline; measured:
// docs/performance.md, batches of small copies). Non-temporal (streaming) stores write whole
// lines to memory without reading them first, which also makes the gather itself faster.
// Not for a DMA that runs while the host is still copying: the pageable staging pipeline's
// chunks are read from the shared cache after their memcpy, while chunks written non-temporally
// are read from memory that the copying loads at the same time, which is slower
// (docs/performance.md, pageable copies).
#pragma once

#include <cstddef>

namespace xfer::cuda {

// Copies `bytes` from `src` to `dst` (not overlapping) with non-temporal stores where the CPU
// has them (x86-64; elsewhere, and for copies of a few cache lines, memcpy). The stores are
// weakly ordered: call dma_staging_fence() before publishing that the bytes are there.
void dma_staging_copy(void *dst, const void *src, std::size_t bytes) noexcept;

// Makes every dma_staging_copy of this thread visible before its later stores (sfence).
void dma_staging_fence() noexcept;

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: the last few memory extents a lookup found, so that the next pointer
// inside one of them is answered without asking again (the driver, or a locked map). Copies
// and batches point into a few allocations over and over. Used by known_memory's per-thread
// cache and by a batch's pointer classifier (memcpy.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

// [start, start + bytes) is memory of kind `memory`.
struct Extent {
    std::uintptr_t start = 0;
    std::size_t bytes = 0;
    Memory memory = Memory::pageable;

    bool contains(std::uintptr_t p) const noexcept { return p - start < bytes; }
};

// A ring of the N extents added last; the oldest goes when a new one comes.
template <std::size_t N>
class RecentExtents {
  public:
    // The extent holding `p`, or nullptr.
    const Extent *find(std::uintptr_t p) const noexcept {
        for (std::size_t k = 0; k < used_; ++k) {
            if (entries_[k].contains(p)) return &entries_[k];
        }
        return nullptr;
    }
    // Adds `e` and returns it as stored.
    const Extent &add(const Extent &e) noexcept {
        Extent &slot = entries_[next_];
        slot = e;
        next_ = (next_ + 1) % N;
        used_ = used_ < N ? used_ + 1 : used_;
        return slot;
    }
    void clear() noexcept {
        used_ = 0;
        next_ = 0;
    }

  private:
    std::array<Extent, N> entries_{};
    std::size_t used_ = 0;
    std::size_t next_ = 0;
};

} // namespace xfer::cuda

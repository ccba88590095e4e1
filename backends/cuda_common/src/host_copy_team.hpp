// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: a packed batch's host copies (the gather into a page-locked staging
// slot, the scatter out of it: batch.hpp) shared among the calling thread and helper threads of
// the packer's pool, in blocks that whichever thread is free takes next.
//
// Why blocks rather than one fixed share per thread: a helper asleep in the pool can take tens of
// microseconds to wake (more on a virtual machine), and with fixed shares the caller of a batch
// of thousands of small entries waited for its late helpers on every group (a trace of the
// packer: docs/performance.md, batches of small copies). With blocks, a late helper simply takes fewer of them, and the
// caller waits only for blocks being copied, never for a helper that has not started.
// Why a team that outlives one copy: a batch's helpers are woken once, while its entries are
// still being planned, and then wait for each group's blocks until the team is released,
// spinning for up to 200 us before they sleep on a condition variable, so a group gathered during
// the call starts with its helpers awake while longer waits (a slot still in use, copies on the
// engine) do not hold cores.
//
// While a batch's team holds pool threads (awake or asleep), a team that a host function makes
// (a scatter in stream order) gets them only after that team is released; its thread copies
// alone meanwhile, so neither waits for the other.
//
// Thread-safety: one thread (the team's owner) calls copy(); helpers only ever take blocks of
// the copy running at that moment. A helper that wakes after its team was released returns at
// once; the team's state lives until the last helper has let go of it.
#pragma once

#include <cstddef>
#include <memory>

namespace boost::asio {
class thread_pool;
}

namespace xfer::cuda {

// One entry's host side: the user's memory and its place in the staging slot.
struct HostPiece {
    unsigned char *user;     // the user's host memory (source or destination)
    std::size_t slot_offset; // in the slot (descriptors included)
    std::size_t bytes;
};

class HostCopyTeam {
  public:
    // Blocks are at least this many bytes of pieces: a block is one atomic claim and one
    // completion count, small beside ~10 us of copying; small enough that a helper joining late
    // still finds work in an 8 MiB group.
    static constexpr std::size_t kBlockBytes = std::size_t{128} << 10;

    // Asks up to `helpers` threads of `pool` to join (none when pool is null, helpers is 0, or
    // the pool refuses the work: the owner then copies alone).
    HostCopyTeam(boost::asio::thread_pool *pool, std::size_t helpers) noexcept;
    // Releases the helpers: they return to the pool as soon as they see it.
    ~HostCopyTeam();
    HostCopyTeam(const HostCopyTeam &) = delete;
    HostCopyTeam &operator=(const HostCopyTeam &) = delete;

    // Copies every piece: gather (user -> slot, non-temporal stores then a store fence, since a
    // DMA reads the slot next: dma_staging_copy.hpp) or scatter (slot -> user). Returns once
    // every piece is copied, by whichever threads took them. Owner thread only; never throws
    // (a copy whose bookkeeping cannot be allocated is done by the owner alone).
    void copy(const HostPiece *pieces, std::size_t count, unsigned char *slot, bool gather) noexcept;

    // Helpers asked to join (for tests).
    std::size_t helpers() const noexcept { return helpers_; }

  private:
    struct Shared;
    std::shared_ptr<Shared> shared_;
    std::size_t helpers_ = 0;
};

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: xfer_register / xfer_unregister on the CUDA backends. User host
// memory is page-locked with cudaHostRegister (in pieces, with rollback), and each context
// keeps the ranges it registered; the plugin entries are in entries.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda {

// ------------------------------------------------------------ registering in pieces
// The part of xfer_register that does not need a device, so it is unit-tested with fake
// register calls.

// The driver takes one cudaHostRegister of any size on current Linux drivers, but older ones
// and some kernels refuse very large single ranges; a range that fails whole and is larger than
// this is tried again in pieces of this size.
constexpr std::size_t kRegisterPieceBytes = std::size_t{1} << 30;

struct Piece {
    char *start = nullptr;
    std::size_t bytes = 0;
};

// Callbacks: `reg` page-locks one piece (reporting its own failure), `unreg` undoes one.
using RegisterFn = xfer_status (*)(void *user, char *start, std::size_t bytes);
using UnregisterFn = void (*)(void *user, char *start, std::size_t bytes);

// Registers [start, start + bytes): whole first; if that fails and bytes > piece_bytes, in
// pieces of piece_bytes (the last one shorter). If a piece fails, every piece registered so far
// is unregistered (in reverse order) and the piece's status is returned; nothing stays
// registered. On success *out holds the pieces (one when the whole range went in one call).
xfer_status register_in_pieces(char *start, std::size_t bytes, std::size_t piece_bytes, RegisterFn reg,
                               UnregisterFn unreg, void *user, std::vector<Piece> *out);

// ----------------------------------------------------------- a context's registrations

// The ranges one context registered explicitly (Context::registrations). Thread-safe.
class HostRegistrations {
  public:
    // Checks (overlap with this context's ranges, memory already page-locked), then
    // cudaHostRegister(cudaHostRegisterPortable | cudaHostRegisterMapped [| ReadOnly]) in
    // pieces with rollback. The context's device must be current.
    xfer_status add(const Context &ctx, void *ptr, std::size_t bytes, unsigned flags);
    // After wait_for_queued_work: cudaHostUnregister of each piece.
    xfer_status remove(const Context &ctx, void *ptr);
    // Whether `ptr` starts a range registered here.
    bool holds(const void *ptr);
    // Unregisters everything left (xfer_close); reports the last failure.
    xfer_status remove_all() noexcept;
    void stats(xfer_registration_stats *out);

  private:
    struct Range {
        std::size_t bytes = 0;
        std::vector<Piece> pieces;
    };
    std::mutex mutex_;
    std::map<std::uintptr_t, Range> ranges_; // start -> range
    std::uint64_t bytes_ = 0;
};

} // namespace xfer::cuda

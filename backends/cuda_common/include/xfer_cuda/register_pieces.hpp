// SPDX-License-Identifier: Apache-2.0
// Registering a host range in pieces, with rollback: the part of xfer_register that does not
// need a device, so it is unit-tested with fake register calls.
#pragma once

#include <cstddef>
#include <vector>

#include <xfer/xfer.h>

namespace xfer::cuda {

// The driver takes one cudaHostRegister of any size on current Linux drivers, but older ones
// and some kernels refuse very large single ranges; a range that fails whole and is larger than
// this is tried again in pieces of this size.
constexpr std::size_t k_register_piece_bytes = std::size_t{1} << 30;

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

}  // namespace xfer::cuda

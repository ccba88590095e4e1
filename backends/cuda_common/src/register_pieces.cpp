// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/register_pieces.hpp"

namespace xfer::cuda {

xfer_status register_in_pieces(char *start, std::size_t bytes, std::size_t piece_bytes, RegisterFn reg,
                               UnregisterFn unreg, void *user, std::vector<Piece> *out) {
    std::vector<Piece> done;
    done.reserve(piece_bytes == 0 ? 1 : bytes / piece_bytes + 1);  // no allocation once pinning starts
    const xfer_status whole = reg(user, start, bytes);
    if (whole == XFER_SUCCESS) {
        done.push_back(Piece{start, bytes});
        *out = std::move(done);
        return XFER_SUCCESS;
    }
    if (piece_bytes == 0 || bytes <= piece_bytes) {
        return whole;
    }
    for (std::size_t offset = 0; offset < bytes; offset += piece_bytes) {
        const std::size_t n = bytes - offset < piece_bytes ? bytes - offset : piece_bytes;
        if (const xfer_status st = reg(user, start + offset, n); st != XFER_SUCCESS) {
            for (auto it = done.rbegin(); it != done.rend(); ++it) {
                unreg(user, it->start, it->bytes);
            }
            return st;
        }
        done.push_back(Piece{start + offset, n});
    }
    *out = std::move(done);
    return XFER_SUCCESS;
}

}  // namespace xfer::cuda

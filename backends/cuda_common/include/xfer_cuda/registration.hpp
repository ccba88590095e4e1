// SPDX-License-Identifier: Apache-2.0
// xfer_register / xfer_unregister on the CUDA backends: user host memory page-locked with
// cudaHostRegister, the ranges a context registered, and the plugin entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <xfer/xfer_backend.h>

#include "register_pieces.hpp"

namespace xfer::cuda {

struct Context;

// The ranges one context registered explicitly. Thread-safe.
class HostRegistrations {
public:
    // Checks (overlap with this context's ranges, memory already page-locked), then
    // cudaHostRegister(cudaHostRegisterPortable | cudaHostRegisterMapped [| ReadOnly]) in
    // pieces with rollback (register_pieces.hpp). The context's device must be current.
    xfer_status add(const Context &ctx, void *ptr, std::size_t bytes, unsigned flags);
    // After wait_for_queued_work: cudaHostUnregister of each piece.
    xfer_status remove(const Context &ctx, void *ptr);
    // Unregisters everything left (xfer_close); reports the last failure.
    xfer_status remove_all() noexcept;
    void stats(xfer_registration_stats *out);

private:
    struct Range {
        std::size_t bytes = 0;
        std::vector<Piece> pieces;
    };
    std::mutex mutex_;
    std::map<std::uintptr_t, Range> ranges_;  // start -> range
    std::uint64_t bytes_ = 0;
};

// Plugin entries (fill_common_entries puts them into every CUDA backend's table).
xfer_status register_memory(void *ctx, void *ptr, size_t bytes, unsigned flags);
xfer_status unregister_memory(void *ctx, void *ptr);
xfer_status registration_stats(void *ctx, xfer_registration_stats *stats);

}  // namespace xfer::cuda

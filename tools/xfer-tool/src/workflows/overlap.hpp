// SPDX-License-Identifier: Apache-2.0
// The passes of the overlap workflow, shared by `run overlap` and `bench`: batches of copy in
// -> scale kernel -> copy out, first serially on one stream, then pipelined over several
// streams, each pass starting from the input on the host and verified exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "testbed.hpp"
#include "verify.hpp"

namespace xfer::tool {

struct PassTimes {
    double total_ms = 0;
    double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0; // per batch, mean over the batches
};

// One repeat of the workflow: both passes and what follows from them.
struct OverlapSample {
    PassTimes serial, pipelined;
    // One batch's three stages, then one slowest stage per further batch (from the serial
    // pass's per-stage means): the pipelined time if copies and compute overlapped perfectly.
    double ideal_ms = 0;
    double speedup() const { return serial.total_ms / pipelined.total_ms; } // x
    double efficiency() const { return ideal_ms / pipelined.total_ms; }     // fraction of the ideal
};

class OverlapPasses {
  public:
    // `bytes` in total, split into `batches` batches of whole floats (at least one each);
    // `streams` streams for the pipelined pass; input floats from `seed`. Allocates one buffer
    // of the context and the streams. Throws XferError / std::invalid_argument.
    OverlapPasses(Testbed &s, std::uint64_t bytes, int batches, int streams, std::uint64_t seed);

    std::size_t bytes() const { return n_ * sizeof(float); }
    std::size_t batch_bytes() const { return batch_elems_ * sizeof(float); }
    std::size_t batches() const { return batches_; }

    // The serial pass, then the pipelined pass, each from the input and verified with `verifier`.
    OverlapSample run(Verifier &verifier);

  private:
    Testbed &s_;
    std::size_t batches_, batch_elems_, n_;
    Buffer buf_;
    std::vector<std::unique_ptr<Stream>> serial_, pipelined_;
    std::vector<float> input_, expected_;
};

} // namespace xfer::tool

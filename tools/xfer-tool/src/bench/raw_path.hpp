// SPDX-License-Identifier: Apache-2.0
// The raw side of a bench row: what a user writes without xfer, on the same memory. On a CUDA
// backend the calls of the kernels library (cudaMemcpyAsync, a loop of it, cudaMemPrefetchAsync,
// cudaMemsetAsync) on the backend's raw stream; on the host backend std::memcpy / std::memset
// on the calling thread. Timed as workflows/raw_copy.hpp's time_raw does (events on the raw
// stream, or steady_clock for the host). Every call waits unless it says otherwise; failures
// throw XferError naming the call.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bench/bench_env.hpp"
#include "workflows/raw_copy.hpp"

namespace xfer::tool {

// Scattered copies: dsts[i] <- srcs[i], sizes[i] bytes.
struct Pieces {
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<std::size_t> sizes;
};

class RawPath {
  public:
    explicit RawPath(BenchEnv::Backend &backend);

    bool cuda() const { return call_ != RawCall::host_memcpy; }
    // "cudaMemcpyAsync" or "std::memcpy": labels of the reference side.
    const char *copy_name() const { return cuda() ? "cudaMemcpyAsync" : "std::memcpy"; }

    // One copy (kind: XFER_COPY_HOST_TO_DEVICE, _DEVICE_TO_HOST or _DEFAULT); returns ms.
    double timed_copy(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind, const std::string &name);
    // One cudaMemcpyAsync (or memcpy) per piece; returns ms from the first's start to the last's end.
    double timed_loop(const Pieces &pieces, xfer_copy_kind kind, const std::string &name);
    // cudaMemPrefetchAsync of a managed range to the device or the host; CUDA only. Returns ms.
    double timed_prefetch(const void *ptr, std::size_t bytes, xfer_direction dir, const std::string &name);
    // Host time of `calls` back-to-back copies, in ns; queued, not waited for (see synchronize).
    double call_ns(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind, std::size_t calls);
    void synchronize() const { raw_stream_.synchronize(); }

    // Untimed: a copy, and zeros into a range of device memory.
    void copy(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind);
    void clear_device(void *ptr, std::size_t bytes);

  private:
    Testbed &s_;
    const Stream &raw_stream_;
    RawCall call_;
};

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// Copies whose host side is pageable memory (malloc, new, a NumPy array: memory CUDA does not
// know). The driver reads such memory when cudaMemcpyAsync is *called*, not when the stream
// reaches the copy, so stream order needs care; and it moves it slowly (one thread, its own
// small staging buffers). A backend may take these copies over (the pageable backend stages
// them through its engine); otherwise they go straight to cudaMemcpyAsync.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

namespace xfer::cuda {

struct Context;

// A backend's own path for copies between pageable host memory and device memory.
class HostCopyHook {
public:
    virtual ~HostCopyHook() = default;

    // Queues the copy of `bytes` between `host` (pageable) and `device` (cudaMalloc memory) on
    // `stream`, in stream order, and sets *taken; or leaves *taken false (nothing queued) so
    // that the caller copies the direct way. The context's device is current.
    virtual xfer_status copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                             bool *taken) noexcept = 0;

    // A failure of work this hook queued on `stream` that nobody has been told of yet (reported
    // through fail() and forgotten), or XFER_SUCCESS. Called after the stream was waited for.
    virtual xfer_status take_stream_error(cudaStream_t /*stream*/) noexcept { return XFER_SUCCESS; }

    // Waits for everything the hook queued and releases what it holds; at context_destroy.
    virtual xfer_status close() noexcept { return XFER_SUCCESS; }
};

// Which streams have work queued through xfer that may still *write* host memory (host
// functions, staged copies to the host). A direct copy from pageable memory reads it at call
// time, so only on such a stream must it wait first: every other direct copy pays nothing.
// Thread-safe. One atomic load on the fast path (no stream of the context has such work).
class HostWriteTracker {
public:
    void begin(cudaStream_t stream);
    void end(cudaStream_t stream) noexcept;
    bool pending(cudaStream_t stream) const noexcept;

private:
    std::atomic<int> total_{0};
    mutable std::mutex mutex_;
    std::unordered_map<cudaStream_t, int> per_stream_;
};

// A copy between pageable `host` and device memory `device` in stream order: the context's
// hook takes it if it will; otherwise cudaMemcpyAsync, after waiting for the stream only when
// earlier work on it may still write host memory (to-device) — the driver's to-host copy from
// device memory into pageable memory is itself stream ordered and returns when done.
// `what` names the operands in a failure message (e.g. "pageable").
xfer_status copy_pageable(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                          cudaStream_t stream, const char *what) noexcept;

// Waits for `stream` (cudaStreamSynchronize) before a copy that would otherwise overtake
// earlier work writing the host memory it reads.
xfer_status wait_before_pageable_copy(cudaStream_t stream) noexcept;

}  // namespace xfer::cuda

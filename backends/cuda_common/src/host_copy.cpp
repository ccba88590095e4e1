// SPDX-License-Identifier: Apache-2.0
// Copies between pageable host memory and device memory in stream order, and the record of
// streams whose queued work may still write host memory.
#include "engine_copy.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

void HostWriteTracker::begin(cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++per_stream_[stream];
    total_.fetch_add(1, std::memory_order_release);
}

void HostWriteTracker::end(cudaStream_t stream) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = per_stream_.find(stream);
    if (it == per_stream_.end()) {
        return;
    }
    if (--it->second == 0) {
        per_stream_.erase(it);
    }
    total_.fetch_sub(1, std::memory_order_release);
}

bool HostWriteTracker::pending_on(cudaStream_t stream) const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return per_stream_.count(stream) != 0;
}

xfer_status wait_before_pageable_copy(cudaStream_t stream) noexcept {
    return check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (keeping stream order before a copy "
                                                "that reads pageable host memory while earlier work on the "
                                                "stream may still write it)");
}

xfer_status copy_pageable(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                          cudaStream_t stream, const char *what) noexcept {
    if (HostCopyHook *hook = ctx.host_copy_hook()) {
        bool taken = false;
        const xfer_status st = hook->copy(device, host, bytes, dir, stream, &taken);
        if (taken || st != XFER_SUCCESS) {
            return st;
        }
    }
    if (dir == XFER_TO_DEVICE) {
        // The driver copies pageable memory into its own staging at call time: wait only if
        // earlier work on the stream may still be writing it.
        if (ctx.host_writes.pending(stream)) {
            if (auto st = wait_before_pageable_copy(stream)) {
                return st;
            }
        }
        return check(engine_copy(device, host, bytes, cudaMemcpyHostToDevice, stream),
                     "cudaMemcpyAsync(%zu bytes, cudaMemcpyHostToDevice from %s host memory)", bytes, what);
    }
    return check(engine_copy(host, device, bytes, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync(%zu bytes, cudaMemcpyDeviceToHost into %s host memory)", bytes, what);
}

} // namespace xfer::cuda

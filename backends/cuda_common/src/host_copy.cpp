// SPDX-License-Identifier: Apache-2.0
// Copies between pageable host memory and device memory in stream order, and the record of
// streams whose queued work may still write host memory.
#include "host_copy.hpp"

#include <cuda.h>

#include "engine_copy.hpp"
#include "user_memory/registration_cache.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/driver_entry.hpp"
#include <xfer_plugin/paths.hpp>

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

namespace {
// cuStreamIsCapturing, looked up once: the driver's answer costs a fraction of the runtime's
// cudaStreamIsCapturing, which every small pageable copy would pay.
using StreamIsCapturing = CUresult(CUDAAPI *)(CUstream, CUstreamCaptureStatus *);
StreamIsCapturing stream_is_capturing() noexcept {
    static const StreamIsCapturing fn = driver_entry<StreamIsCapturing>("cuStreamIsCapturing", 10000);
    return fn;
}
} // namespace

xfer_status capturing(cudaStream_t stream, bool *capture) noexcept {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (const StreamIsCapturing query = stream_is_capturing()) {
        const CUresult r = query(reinterpret_cast<CUstream>(stream), &status);
        if (r != CUDA_SUCCESS) {
            return fail(XFER_ERROR_BACKEND, "cuStreamIsCapturing(%p) failed (CUresult %d)", static_cast<void *>(stream),
                        static_cast<int>(r));
        }
    } else {
        cudaStreamCaptureStatus runtime_status = cudaStreamCaptureStatusNone;
        if (auto st = check(cudaStreamIsCapturing(stream, &runtime_status), "cudaStreamIsCapturing(%p)",
                            static_cast<void *>(stream))) {
            return st;
        }
        status = runtime_status == cudaStreamCaptureStatusNone ? CU_STREAM_CAPTURE_STATUS_NONE
                                                               : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    }
    *capture = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return XFER_SUCCESS;
}

xfer_status refuse_while_capturing(cudaStream_t stream, std::size_t bytes, const char *what, const char *why) noexcept {
    bool capture = false;
    if (auto st = capturing(stream, &capture)) {
        return st;
    }
    if (!capture) {
        return XFER_SUCCESS;
    }
    return fail(XFER_ERROR_NOT_SUPPORTED,
                "a %zu-byte copy of %s cannot be captured into a CUDA graph: stream %p is capturing, and %s; "
                "nothing was queued and the capture goes on",
                bytes, what, static_cast<void *>(stream), why);
}

xfer_status refuse_pageable_while_capturing(cudaStream_t stream, std::size_t bytes, const char *what) noexcept {
    return refuse_while_capturing(
        stream, bytes, what,
        "a copy of pageable host memory cannot be part of a graph (the driver's pageable copy would invalidate "
        "the capture; a staged, gathered or newly registered copy would not move the bytes at replay): "
        "page-lock the memory (xfer_register, or the pinned backend's buffers) to capture its copies");
}

xfer_status copy_pageable(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                          cudaStream_t stream, const char *what) noexcept {
    // A buffer's host view: its pages stay its own while the buffer lives (the buffer's release
    // forgets what the cache holds of it), so a hit trusts them.
    user_memory::RegistrationCache &cache = *ctx.cache;
    // A range a raw copy page-locked inside the view, which this copy would straddle (the
    // driver refuses a copy that crosses a registration's end), goes first.
    if (cache.may_hold_ranges()) cache.drop_stale(host, bytes, false);
    user_memory::Decision plan;
    if (cache.may_take(bytes, true)) {
        bool taken = false;
        void *dst = dir == XFER_TO_DEVICE ? device : host;
        const void *src = dir == XFER_TO_DEVICE ? host : device;
        if (auto st = cache.copy(dst, src, bytes, dir, false, true, stream, &plan, &taken);
            st != XFER_SUCCESS || taken) {
            return st;
        }
    } else {
        plan = cache.plan_untracked(bytes, dir);
    }
    return copy_pageable_planned(ctx, device, host, bytes, dir, stream, plan, what);
}

xfer_status copy_pageable_planned(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                                  cudaStream_t stream, const user_memory::Decision &plan, const char *what) noexcept {
    xfer_path_reason reason = plan.reason;
    if (HostCopyHook *hook = ctx.host_copy_hook()) {
        // The driver reads pageable memory at call time: a copy to the device behind work that
        // may still write it is ordered by the engine instead of a wait for the stream.
        const bool at_risk =
            dir == XFER_TO_DEVICE && plan.choice == user_memory::Choice::driver && ctx.host_writes.pending(stream);
        if (plan.choice == user_memory::Choice::staged || at_risk) {
            bool taken = false;
            // The hook reports its own path (staged) before it queues anything.
            const xfer_status st = hook->copy(device, host, bytes, dir, stream, at_risk ? XFER_REASON_MEMORY : reason,
                                              plan.register_in_background, &taken);
            if (taken || st != XFER_SUCCESS) {
                return st;
            }
            if (!at_risk) reason = XFER_REASON_NO_FASTER_PATH; // no room in the arena, or the engine could not start
        }
    }
    if (auto st = plugin::take_path(XFER_PATH_DRIVER_PAGEABLE, reason, bytes)) {
        return st;
    }
    return copy_pageable_direct(ctx, device, host, bytes, dir, stream, what);
}

xfer_status copy_pageable_direct(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                                 cudaStream_t stream, const char *what) noexcept {
    if (dir == XFER_TO_DEVICE && ctx.host_writes.pending(stream)) {
        // The driver copies pageable memory into its own staging at call time: wait only if
        // earlier work on the stream may still be writing it.
        if (auto st = wait_before_pageable_copy(stream)) {
            return st;
        }
    }
    const auto copy = [&] {
        return dir == XFER_TO_DEVICE ? engine_copy(device, host, bytes, cudaMemcpyHostToDevice, stream)
                                     : engine_copy(host, device, bytes, cudaMemcpyDeviceToHost, stream);
    };
    const cudaError_t err = retry_if_straddled(ctx, host, nullptr, bytes, copy(), copy);
    return dir == XFER_TO_DEVICE
               ? check(err, "cudaMemcpyAsync(%zu bytes, cudaMemcpyHostToDevice from %s host memory)", bytes, what)
               : check(err, "cudaMemcpyAsync(%zu bytes, cudaMemcpyDeviceToHost into %s host memory)", bytes, what);
}

xfer_copy_path path_of(Memory to, Memory from) noexcept {
    if (to == Memory::managed || from == Memory::managed) return XFER_PATH_MANAGED_COPY;
    if (to == Memory::device && from == Memory::device) return XFER_PATH_DEVICE_COPY;
    if (to == Memory::device || from == Memory::device) {
        return to == Memory::pageable || from == Memory::pageable ? XFER_PATH_DRIVER_PAGEABLE : XFER_PATH_PINNED_DMA;
    }
    return XFER_PATH_HOST_MEMCPY; // host to host: the driver copies on the host
}

} // namespace xfer::cuda

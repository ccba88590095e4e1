// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common (and the backends' copy paths): one copy queued on the copy engine
// through the driver API, the runtime's cudaMemcpyAsync semantics kept.
//
// Why not cudaMemcpyAsync itself: the runtime's layer costs host time on every call over the
// driver's cuMemcpy*Async that it ends in, for every pair of memories xfer copies between, about
// as much as the whole budget a small copy has over the raw call (measured: docs/performance.md,
// per-call overhead of a small copy). The driver functions are reached through the runtime
// (driver_entry.hpp), with the signatures of CUDA 12's driver.
//
// Errors keep one path: a driver call that fails has queued nothing (or, for pageable memory that
// the driver stages at call time, copied part of the bytes: copying them again is harmless), and
// the same copy then goes to cudaMemcpyAsync, whose error is what the caller checks and reports
// (check(), with its sticky-error rules). So the statuses and messages of failures are the
// runtime's, as if cudaMemcpyAsync had been called. Except a stream-capture refusal (CUDA_ERROR_STREAM_CAPTURE_*,
// CUDA_ERROR_CAPTURED_EVENT): it invalidates the capture, after which the runtime could only say
// so; it is returned as the runtime's code of the same number.
// Requires: the context's device bound on this thread (activate()), as for any copy.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

namespace xfer::cuda {

// Queues dst <- src (bytes) on `stream` as cudaMemcpyAsync(dst, src, bytes, kind, stream) would,
// and returns what it would return. `kind`: HostToDevice, DeviceToHost, DeviceToDevice or
// Default (unified addressing: either pointer of any memory).
cudaError_t engine_copy(void *dst, const void *src, std::size_t bytes, cudaMemcpyKind kind,
                        cudaStream_t stream) noexcept;

} // namespace xfer::cuda

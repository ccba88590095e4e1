// SPDX-License-Identifier: Apache-2.0
// Measuring this machine's copy costs on one GPU (the calibration): about a second, on buffers
// of its own and a stream of its own. Every figure is the median of a few host-timed copies
// (the call to the stream's completion: what a copy costs whoever issues it), after a warm-up,
// at sizes from 64 KiB to 256 MiB:
//   - dma:      cudaMemcpyAsync from and to page-locked memory (cudaHostAlloc);
//   - driver:   cudaMemcpyAsync from and to malloc'd memory (touched first);
//   - staged:   the context's staging engine on the same memory, where the backend has one;
//   - register: cudaHostRegister and cudaHostUnregister of touched malloc'd memory at two sizes,
//               fitted as a cost per call plus one per byte;
//   - fill:     one thread's memcpy from that memory into page-locked memory (the host work a
//               staged copy does per byte, summed over its workers).
#pragma once

#include "calibration_file.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda::user_memory {

// This host's and ctx's GPU's key (cudaGetDeviceProperties' UUID, the driver and runtime
// versions). The device must be bound.
xfer_status calibration_key(const Context &ctx, CalibrationKey *out) noexcept;

// Measures into *out (its key set by the caller). The device must be bound; `hook` (may be
// null) is the context's staging engine, measured too where it takes the copies.
xfer_status measure_calibration(const Context &ctx, HostCopyHook *hook, Calibration *out) noexcept;

} // namespace xfer::cuda::user_memory

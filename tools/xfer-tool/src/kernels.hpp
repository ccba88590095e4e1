// SPDX-License-Identifier: Apache-2.0
// The workflows' device kernels, in a host version and a CUDA version picked by the context's
// device kind. The library itself stays free of compute: kernels live with the tool.
//
// All launches are asynchronous and stream-ordered on the given stream; pointers are device
// views (for the host backend, its emulated device memory). Failures throw XferError.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "xfer_handles.hpp"

namespace xfer::tool {

class Kernels {
  public:
    virtual ~Kernels() = default;
    // "host (stream-ordered host functions)" or "cuda (<library path>)".
    virtual std::string description() const = 0;

    // out[i] = sqrt(in[i])
    virtual void sqrt(const float *in, float *out, std::size_t n, const Stream &s) = 0;
    // c[i] = a[i] + b[i]
    virtual void vector_add(const float *a, const float *b, float *c, std::size_t n, const Stream &s) = 0;
    // data[i] *= factor
    virtual void scale(float *data, std::size_t n, float factor, const Stream &s) = 0;
    // out[i] = in[xfer_tool_gather_index(i, n, stride)] + 1 (stride 1: coalesced reads)
    virtual void gather(const float *in, float *out, std::size_t n, std::size_t stride, const Stream &s) = 0;

    // The raw CUDA calls a user writes without xfer (bandwidth's side-by-side, raw_copy.hpp),
    // queued on s: cudaMemcpyAsync(dst, src, bytes, H2D or D2H) and cudaMemPrefetchAsync of a
    // managed range to the device (XFER_TO_DEVICE) or the host. The host kernels have no CUDA
    // call to make and throw XferError(XFER_ERROR_NOT_SUPPORTED).
    virtual void raw_memcpy_async(void *dst, const void *src, std::size_t bytes, xfer_direction dir,
                                  const Stream &s) = 0;
    virtual void raw_prefetch_async(const void *ptr, std::size_t bytes, xfer_direction dir, const Stream &s) = 0;

    // bench's raw calls (xfer_tool_kernels.h), with a copy kind: XFER_COPY_HOST_TO_DEVICE,
    // XFER_COPY_DEVICE_TO_HOST or XFER_COPY_DEFAULT (cudaMemcpyDefault, for shared-view memory).
    // A loop of cudaMemcpyAsync, one per piece, queued on s:
    virtual void raw_memcpy_loop(void *const *dsts, const void *const *srcs, const std::size_t *sizes,
                                 std::size_t count, xfer_copy_kind kind, const Stream &s) = 0;
    // Host nanoseconds spent in `calls` back-to-back cudaMemcpyAsync calls (queued, not waited for):
    virtual double raw_memcpy_call_ns(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind,
                                      std::size_t calls, const Stream &s) = 0;
    // cudaMemsetAsync of a device range, queued on s:
    virtual void raw_memset_async(void *ptr, int value, std::size_t bytes, const Stream &s) = 0;

    // cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes) on s, whose device is
    // stream_device (`peer` workflow); the host kernels throw NOT_SUPPORTED here too.
    virtual void raw_memcpy_peer_async(void *dst, int dst_device, const void *src, int src_device, std::size_t bytes,
                                       int stream_device, const Stream &s) = 0;
};

// Host kernels run as stream-ordered host functions (xfer_stream_launch_host_func): on the
// host backend the stream's worker thread is the "device".
std::unique_ptr<Kernels> make_host_kernels();

// Loads libxfer-tool-kernels-cuda.so with Boost.DLL (XFER_TOOL_KERNELS_PATH overrides the
// path; default: lib/ next to the tool's bin/). Throws XferError(XFER_ERROR_BACKEND_UNAVAILABLE)
// naming the file and the loader's message when it cannot be loaded.
std::unique_ptr<Kernels> make_cuda_kernels(int device);

// The kernels for a context's device kind.
std::unique_ptr<Kernels> make_kernels(const Context &ctx);

} // namespace xfer::tool

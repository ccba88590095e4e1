// SPDX-License-Identifier: Apache-2.0
// The raw CUDA calls a user writes without xfer, for the side-by-side comparisons of
// `bandwidth`, `peer` and `bench` (see xfer_tool_kernels.h). Host code only; a .cu file so it shares the library's CUDA setup.
#include <chrono>
#include <cstdarg>
#include <cstdio>

#include <cuda_runtime.h>

#include "xfer_tool_kernels.h"

namespace {

// Writes "<call>: <name>: <description> (<code>)" and returns the code, so every failing call
// is reported by name with its arguments.
__attribute__((format(printf, 4, 5))) int failed(cudaError_t err, char *message, size_t message_size,
                                                 const char *call_format, ...) {
    if (message && message_size) {
        char call[160];
        va_list args;
        va_start(args, call_format);
        std::vsnprintf(call, sizeof call, call_format, args);
        va_end(args);
        std::snprintf(message, message_size, "%s: %s: %s (%d)", call, cudaGetErrorName(err), cudaGetErrorString(err),
                      static_cast<int>(err));
    }
    return static_cast<int>(err);
}

const char *direction_name(int direction) {
    switch (direction) {
    case XFER_TOOL_RAW_TO_DEVICE:
        return "cudaMemcpyHostToDevice";
    case XFER_TOOL_RAW_TO_HOST:
        return "cudaMemcpyDeviceToHost";
    default:
        return "cudaMemcpyDefault";
    }
}

bool valid_copy_direction(int direction) {
    return direction == XFER_TOOL_RAW_TO_DEVICE || direction == XFER_TOOL_RAW_TO_HOST ||
           direction == XFER_TOOL_RAW_DEFAULT;
}

cudaMemcpyKind copy_kind(int direction) {
    switch (direction) {
    case XFER_TOOL_RAW_TO_DEVICE:
        return cudaMemcpyHostToDevice;
    case XFER_TOOL_RAW_TO_HOST:
        return cudaMemcpyDeviceToHost;
    default:
        return cudaMemcpyDefault;
    }
}

// The checks every raw copy entry starts with: a known direction, then the device.
int copy_prologue(int device, int direction, const char *entry, char *message, size_t message_size) {
    if (!valid_copy_direction(direction))
        return failed(cudaErrorInvalidValue, message, message_size, "%s(direction %d)", entry, direction);
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", device);
    return 0;
}

} // namespace

extern "C" {

int xfer_tool_raw_memcpy_async(int device, void *dst, const void *src, size_t bytes, int direction, void *stream,
                               char *message, size_t message_size) {
    if (int err = copy_prologue(device, direction, "xfer_tool_raw_memcpy_async", message, message_size)) return err;
    if (cudaError_t err = cudaMemcpyAsync(dst, src, bytes, copy_kind(direction), static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
        return failed(err, message, message_size, "cudaMemcpyAsync(%zu bytes, %s)", bytes, direction_name(direction));
    return 0;
}

int xfer_tool_raw_prefetch_async(int device, const void *ptr, size_t bytes, int direction, void *stream, char *message,
                                 size_t message_size) {
    if (direction != XFER_TOOL_RAW_TO_DEVICE && direction != XFER_TOOL_RAW_TO_HOST)
        return failed(cudaErrorInvalidValue, message, message_size, "xfer_tool_raw_prefetch_async(direction %d)",
                      direction);
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", device);
    // The host location's id is ignored; the device's is its ordinal.
    const bool to_device = direction == XFER_TOOL_RAW_TO_DEVICE;
    const cudaMemLocation location =
        to_device ? cudaMemLocation{cudaMemLocationTypeDevice, device} : cudaMemLocation{cudaMemLocationTypeHost, 0};
    if (cudaError_t err = cudaMemPrefetchAsync(ptr, bytes, location, 0, static_cast<cudaStream_t>(stream));
        err != cudaSuccess) {
        if (to_device)
            return failed(err, message, message_size, "cudaMemPrefetchAsync(%zu bytes, device %d)", bytes, device);
        return failed(err, message, message_size, "cudaMemPrefetchAsync(%zu bytes, host)", bytes);
    }
    return 0;
}

int xfer_tool_raw_memcpy_loop(int device, void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                              int direction, void *stream, char *message, size_t message_size) {
    if (int err = copy_prologue(device, direction, "xfer_tool_raw_memcpy_loop", message, message_size)) return err;
    const cudaMemcpyKind kind = copy_kind(direction);
    const auto st = static_cast<cudaStream_t>(stream);
    for (size_t i = 0; i < count; ++i)
        if (cudaError_t err = cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], kind, st); err != cudaSuccess)
            return failed(err, message, message_size, "cudaMemcpyAsync(copy %zu of %zu, %zu bytes, %s)", i, count,
                          sizes[i], direction_name(direction));
    return 0;
}

int xfer_tool_raw_memcpy_call_ns(int device, void *dst, const void *src, size_t bytes, int direction, void *stream,
                                 size_t calls, double *ns, char *message, size_t message_size) {
    if (!ns) return failed(cudaErrorInvalidValue, message, message_size, "xfer_tool_raw_memcpy_call_ns(ns NULL)");
    if (int err = copy_prologue(device, direction, "xfer_tool_raw_memcpy_call_ns", message, message_size)) return err;
    const cudaMemcpyKind kind = copy_kind(direction);
    const auto st = static_cast<cudaStream_t>(stream);
    // Only the calls between the clock reads: what a user's loop of cudaMemcpyAsync costs.
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < calls; ++i)
        if (cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, st); err != cudaSuccess)
            return failed(err, message, message_size, "cudaMemcpyAsync(call %zu of %zu, %zu bytes, %s)", i, calls,
                          bytes, direction_name(direction));
    const auto t1 = std::chrono::steady_clock::now();
    *ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    return 0;
}

int xfer_tool_raw_memset_async(int device, void *ptr, int value, size_t bytes, void *stream, char *message,
                               size_t message_size) {
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", device);
    if (cudaError_t err = cudaMemsetAsync(ptr, value, bytes, static_cast<cudaStream_t>(stream)); err != cudaSuccess)
        return failed(err, message, message_size, "cudaMemsetAsync(%zu bytes, value %d)", bytes, value);
    return 0;
}

int xfer_tool_raw_memcpy_peer_async(int stream_device, void *dst, int dst_device, const void *src, int src_device,
                                    size_t bytes, void *stream, char *message, size_t message_size) {
    if (cudaError_t err = cudaSetDevice(stream_device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", stream_device);
    if (cudaError_t err =
            cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
        return failed(err, message, message_size, "cudaMemcpyPeerAsync(%zu bytes, device %d <- device %d)", bytes,
                      dst_device, src_device);
    return 0;
}

} // extern "C"

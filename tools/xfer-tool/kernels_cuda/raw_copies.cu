// The raw CUDA calls a user writes without xfer, for bandwidth's side-by-side comparison
// (see xfer_tool_kernels.h). Host code only; a .cu file so it shares the library's CUDA setup.
#include "xfer_tool_kernels.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>

namespace {

// Writes "<call>: <name>: <description> (<code>)" and returns the code, so every failing call
// is reported by name with its arguments.
__attribute__((format(printf, 4, 5))) int failed(cudaError_t err, char *message, size_t message_size,
                                                 const char *call_format, ...)
{
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

const char *direction_name(int direction)
{
    return direction == XFER_TOOL_RAW_TO_DEVICE ? "cudaMemcpyHostToDevice" : "cudaMemcpyDeviceToHost";
}

} // namespace

extern "C" {

int xfer_tool_raw_memcpy_async(int device, void *dst, const void *src, size_t bytes, int direction, void *stream,
                               char *message, size_t message_size)
{
    if (direction != XFER_TOOL_RAW_TO_DEVICE && direction != XFER_TOOL_RAW_TO_HOST)
        return failed(cudaErrorInvalidValue, message, message_size, "xfer_tool_raw_memcpy_async(direction %d)",
                      direction);
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", device);
    const cudaMemcpyKind kind = direction == XFER_TOOL_RAW_TO_DEVICE ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
        return failed(err, message, message_size, "cudaMemcpyAsync(%zu bytes, %s)", bytes, direction_name(direction));
    return 0;
}

int xfer_tool_raw_prefetch_async(int device, const void *ptr, size_t bytes, int direction, void *stream,
                                 char *message, size_t message_size)
{
    if (direction != XFER_TOOL_RAW_TO_DEVICE && direction != XFER_TOOL_RAW_TO_HOST)
        return failed(cudaErrorInvalidValue, message, message_size, "xfer_tool_raw_prefetch_async(direction %d)",
                      direction);
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", device);
    // The host location's id is ignored; the device's is its ordinal.
    const bool to_device = direction == XFER_TOOL_RAW_TO_DEVICE;
    const cudaMemLocation location = to_device ? cudaMemLocation{cudaMemLocationTypeDevice, device}
                                               : cudaMemLocation{cudaMemLocationTypeHost, 0};
    if (cudaError_t err = cudaMemPrefetchAsync(ptr, bytes, location, 0, static_cast<cudaStream_t>(stream));
        err != cudaSuccess) {
        if (to_device)
            return failed(err, message, message_size, "cudaMemPrefetchAsync(%zu bytes, device %d)", bytes, device);
        return failed(err, message, message_size, "cudaMemPrefetchAsync(%zu bytes, host)", bytes);
    }
    return 0;
}

int xfer_tool_raw_memcpy_peer_async(int stream_device, void *dst, int dst_device, const void *src, int src_device,
                                    size_t bytes, void *stream, char *message, size_t message_size)
{
    if (cudaError_t err = cudaSetDevice(stream_device); err != cudaSuccess)
        return failed(err, message, message_size, "cudaSetDevice(%d)", stream_device);
    if (cudaError_t err = cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes,
                                              static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
        return failed(err, message, message_size, "cudaMemcpyPeerAsync(%zu bytes, device %d <- device %d)", bytes,
                      dst_device, src_device);
    return 0;
}

} // extern "C"

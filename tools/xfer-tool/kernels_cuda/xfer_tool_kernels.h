/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer_tool_kernels.h -- the C interface of libxfer-tool-kernels-cuda.so, the CUDA versions of
 * xfer-tool's workflow kernels. xfer-tool loads the library at run time (Boost.DLL) only for a
 * CUDA context, so only C types cross this boundary: device pointers, element counts, and the
 * cudaStream_t from xfer_stream_native() passed as void *.
 *
 * Every launcher sets the device, launches on `stream` without waiting, and returns the
 * cudaError_t of the launch as an int (0 = success); xfer_tool_cuda_error_string() names it.
 * Kernels work on float arrays of `n` elements with grid-stride loops (any n).
 *
 * The raw calls (xfer_tool_raw_*) are what a user writes without xfer; `bandwidth`, `peer` and
 * `bench` time them next to xfer's calls on the same memory. They queue on `stream` without
 * waiting, never throw, and return the cudaError_t of the first failing call (0 = success); on
 * failure they write "<call>(<arguments>): <cudaErrorName>: <description> (<code>)" into
 * `message` (`message_size` bytes, always terminated; NULL or 0 writes nothing).
 */
#ifndef XFER_TOOL_KERNELS_H
#define XFER_TOOL_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define XFER_TOOL_KERNELS_API __attribute__((visibility("default")))
#else
#define XFER_TOOL_KERNELS_API
#endif

/** Interface version; the tool refuses a library that reports another one. 4: version 2 plus
    bench's raw calls (memcpy loop, per-call time, memset) and peer's raw peer copy. */
#define XFER_TOOL_KERNELS_ABI 4

XFER_TOOL_KERNELS_API int xfer_tool_kernels_abi(void);

/** "cudaErrorX: description" for a code a launcher returned. Never NULL. */
XFER_TOOL_KERNELS_API const char *xfer_tool_cuda_error_string(int code);

/** out[i] = sqrtf(in[i]) (IEEE round-to-nearest, as the host's std::sqrt). */
XFER_TOOL_KERNELS_API int xfer_tool_sqrt(int device, const float *in, float *out, size_t n, void *stream);

/** c[i] = a[i] + b[i]. */
XFER_TOOL_KERNELS_API int xfer_tool_vector_add(int device, const float *a, const float *b, float *c, size_t n,
                                               void *stream);

/** data[i] *= factor, in place. */
XFER_TOOL_KERNELS_API int xfer_tool_scale(int device, float *data, size_t n, float factor, void *stream);

/** out[i] = in[xfer_tool_gather_index(i, n, stride)] + 1.0f: thread i reads element i when
    stride is 1 (coalesced), elements `stride` apart from its neighbours' otherwise. */
XFER_TOOL_KERNELS_API int xfer_tool_gather(int device, const float *in, float *out, size_t n, size_t stride,
                                           void *stream);

/** Directions of the raw calls (no cudaMemcpyKind on this boundary: it is a CUDA type). */
#define XFER_TOOL_RAW_TO_DEVICE 1 /**< host view -> device view (cudaMemcpyHostToDevice) */
#define XFER_TOOL_RAW_TO_HOST 2   /**< device view -> host view (cudaMemcpyDeviceToHost) */
#define XFER_TOOL_RAW_DEFAULT                                                                                          \
    3 /**< cudaMemcpyDefault: the runtime infers it (managed, mapped memory);
                                       xfer_tool_raw_memcpy_async and _loop and _call_ns only */

/** cudaSetDevice(device), then cudaMemcpyAsync(dst, src, bytes, kind of `direction`, stream). */
XFER_TOOL_KERNELS_API int xfer_tool_raw_memcpy_async(int device, void *dst, const void *src, size_t bytes,
                                                     int direction, void *stream, char *message, size_t message_size);

/** cudaSetDevice(device), then cudaMemPrefetchAsync(ptr, bytes, location, 0, stream) in the
    CUDA 13 cudaMemLocation form: the device for XFER_TOOL_RAW_TO_DEVICE, the host otherwise. */
XFER_TOOL_KERNELS_API int xfer_tool_raw_prefetch_async(int device, const void *ptr, size_t bytes, int direction,
                                                       void *stream, char *message, size_t message_size);

/** The loop a user writes for scattered pieces without xfer (xfer-tool bench): cudaSetDevice(device),
    then for i in [0, count): cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], kind of `direction`,
    stream). Stops at the first failing call (the message names its index). */
XFER_TOOL_KERNELS_API int xfer_tool_raw_memcpy_loop(int device, void *const *dsts, const void *const *srcs,
                                                    const size_t *sizes, size_t count, int direction, void *stream,
                                                    char *message, size_t message_size);

/** Host time of `calls` back-to-back cudaMemcpyAsync(dst, src, bytes, kind of `direction`,
    stream) calls (xfer-tool bench's per-call overhead): cudaSetDevice(device) first, then
    std::chrono::steady_clock around the loop alone; `*ns` (not NULL) receives the loop's total
    in nanoseconds. Does not wait for the copies: the caller synchronises the stream. */
XFER_TOOL_KERNELS_API int xfer_tool_raw_memcpy_call_ns(int device, void *dst, const void *src, size_t bytes,
                                                       int direction, void *stream, size_t calls, double *ns,
                                                       char *message, size_t message_size);

/** cudaSetDevice(device), then cudaMemsetAsync(ptr, value, bytes, stream): clears a device
    range before a copy into it is verified. */
XFER_TOOL_KERNELS_API int xfer_tool_raw_memset_async(int device, void *ptr, int value, size_t bytes, void *stream,
                                                     char *message, size_t message_size);

/** cudaSetDevice(stream_device), then cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes,
    stream): the raw call the `peer` workflow times next to xfer_memcpy_peer_async. Peer access
    is whatever the process has enabled (xfer enables it once per pair). */
XFER_TOOL_KERNELS_API int xfer_tool_raw_memcpy_peer_async(int stream_device, void *dst, int dst_device, const void *src,
                                                          int src_device, size_t bytes, void *stream, char *message,
                                                          size_t message_size);

/* Symbol names the tool looks up. */
#define XFER_TOOL_SYM_ABI "xfer_tool_kernels_abi"
#define XFER_TOOL_SYM_ERROR_STRING "xfer_tool_cuda_error_string"
#define XFER_TOOL_SYM_SQRT "xfer_tool_sqrt"
#define XFER_TOOL_SYM_VECTOR_ADD "xfer_tool_vector_add"
#define XFER_TOOL_SYM_SCALE "xfer_tool_scale"
#define XFER_TOOL_SYM_GATHER "xfer_tool_gather"
#define XFER_TOOL_SYM_RAW_MEMCPY_ASYNC "xfer_tool_raw_memcpy_async"
#define XFER_TOOL_SYM_RAW_PREFETCH_ASYNC "xfer_tool_raw_prefetch_async"
#define XFER_TOOL_SYM_RAW_MEMCPY_LOOP "xfer_tool_raw_memcpy_loop"
#define XFER_TOOL_SYM_RAW_MEMCPY_CALL_NS "xfer_tool_raw_memcpy_call_ns"
#define XFER_TOOL_SYM_RAW_MEMSET_ASYNC "xfer_tool_raw_memset_async"
#define XFER_TOOL_SYM_RAW_MEMCPY_PEER_ASYNC "xfer_tool_raw_memcpy_peer_async"

#ifdef __cplusplus
} /* extern "C" */
#endif

/*
 * The index permutation of the strided read, shared by the CUDA kernel and the host version:
 * the first (n / stride) * stride elements are read column by column of a row-major
 * (n / stride) x stride matrix, so neighbouring i read elements `stride` apart and every
 * element is read exactly once; the tail (n % stride elements) is read in order.
 */
#if defined(__CUDACC__)
#define XFER_TOOL_HD __host__ __device__
#else
#define XFER_TOOL_HD
#endif
static inline XFER_TOOL_HD size_t xfer_tool_gather_index(size_t i, size_t n, size_t stride) {
    size_t rows = stride ? n / stride : 0;
    if (stride <= 1 || rows == 0 || i >= rows * stride) return i;
    return (i % rows) * stride + i / rows;
}

#endif /* XFER_TOOL_KERNELS_H */

// SPDX-License-Identifier: Apache-2.0
// Plugin-table entries that are the same for every CUDA backend, and the function that puts
// them into a backend's table.
#pragma once

#include <xfer/xfer_backend.h>

namespace xfer::cuda {

// Streams: non-blocking CUDA streams (cudaStreamCreateWithFlags(cudaStreamNonBlocking)), so
// they never serialise with the legacy default stream; the void* is the cudaStream_t itself.
xfer_status stream_create(void *ctx, void **stream);
xfer_status stream_destroy(void *ctx, void *stream);
xfer_status stream_synchronize(void *ctx, void *stream);
xfer_status stream_query(void *ctx, void *stream);
xfer_status stream_wait_event(void *ctx, void *stream, void *event);
xfer_status stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data);
void *stream_native(void *ctx, void *stream);

// Events: the void* is the cudaEvent_t itself.
xfer_status event_create(void *ctx, unsigned flags, void **event);
xfer_status event_destroy(void *ctx, void *event);
xfer_status event_record(void *ctx, void *event, void *stream);
xfer_status event_synchronize(void *ctx, void *event);
xfer_status event_query(void *ctx, void *event);
xfer_status event_elapsed_ms(void *ctx, void *start, void *end, float *ms);

// Raw copies between any pointers the device can reach (cudaMemcpyAsync /
// cudaMemcpyBatchAsync), keeping stream order for pageable host pointers too.
xfer_status memcpy_async(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind,
                         void *stream);
xfer_status memcpy_batch_async(void *ctx, void *const *dsts, const void *const *srcs, const size_t *sizes,
                               size_t count, xfer_copy_kind kind, void *stream);

xfer_status device_info(void *ctx, xfer_device_info *info);

// Fills ABI versions, struct_size, device_kind and every entry above (plus context_destroy);
// describe() (backend.hpp) adds what a backend's description says.
void fill_common_entries(xfer_backend_table &table) noexcept;

}  // namespace xfer::cuda

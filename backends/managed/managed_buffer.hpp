// The managed strategy's buffer entries.
#pragma once

#include <xfer/xfer_backend.h>

namespace xfer::cuda::managed {

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view, void **device_view);
xfer_status buffer_free(void *ctx, void *buf);
xfer_status buffer_copy_async(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes, void *stream);

}  // namespace xfer::cuda::managed

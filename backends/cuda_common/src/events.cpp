// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda {
namespace {
cudaStream_t as_stream(void *stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t as_event(void *event) { return static_cast<cudaEvent_t>(event); }
}  // namespace

xfer_status event_create(void *ctx, unsigned flags, void **event) {
    return on_device("event_create", ctx, [&](const Context &) {
        const unsigned cuda_flags = (flags & XFER_EVENT_DISABLE_TIMING) ? cudaEventDisableTiming : cudaEventDefault;
        cudaEvent_t e = nullptr;
        if (auto st = check(cudaEventCreateWithFlags(&e, cuda_flags), "cudaEventCreateWithFlags(0x%x)", cuda_flags)) {
            return st;
        }
        *event = e;
        return XFER_SUCCESS;
    });
}

xfer_status event_destroy(void *ctx, void *event) {
    return on_device("event_destroy", ctx, [&](const Context &) {
        return check(cudaEventDestroy(as_event(event)), "cudaEventDestroy");
    });
}

xfer_status event_record(void *ctx, void *event, void *stream) {
    return on_device("event_record", ctx, [&](const Context &) {
        return check(cudaEventRecord(as_event(event), as_stream(stream)), "cudaEventRecord");
    });
}

xfer_status event_synchronize(void *ctx, void *event) {
    return on_device("event_synchronize", ctx, [&](const Context &) {
        return check(cudaEventSynchronize(as_event(event)), "cudaEventSynchronize");
    });
}

xfer_status event_query(void *ctx, void *event) {
    return on_device("event_query", ctx, [&](const Context &) {
        return check_query(cudaEventQuery(as_event(event)), "cudaEventQuery");
    });
}

xfer_status event_elapsed_ms(void *ctx, void *start, void *end, float *ms) {
    return on_device("event_elapsed_ms", ctx, [&](const Context &) {
        float value = 0.0f;
        if (auto st = check_query(cudaEventElapsedTime(&value, as_event(start), as_event(end)),
                                  "cudaEventElapsedTime")) {
            return st;
        }
        *ms = value;
        return XFER_SUCCESS;
    });
}

}  // namespace xfer::cuda

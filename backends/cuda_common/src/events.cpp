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
    return guarded("event_create", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
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
    return guarded("event_destroy", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        return check(cudaEventDestroy(as_event(event)), "cudaEventDestroy");
    });
}

xfer_status event_record(void *ctx, void *event, void *stream) {
    return guarded("event_record", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        return check(cudaEventRecord(as_event(event), as_stream(stream)), "cudaEventRecord");
    });
}

xfer_status event_synchronize(void *ctx, void *event) {
    return guarded("event_synchronize", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        return check(cudaEventSynchronize(as_event(event)), "cudaEventSynchronize");
    });
}

xfer_status event_query(void *ctx, void *event) {
    return guarded("event_query", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        const cudaError_t err = cudaEventQuery(as_event(event));
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();
            return XFER_ERROR_NOT_READY;
        }
        return check(err, "cudaEventQuery");
    });
}

xfer_status event_elapsed_ms(void *ctx, void *start, void *end, float *ms) {
    return guarded("event_elapsed_ms", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        float value = 0.0f;
        const cudaError_t err = cudaEventElapsedTime(&value, as_event(start), as_event(end));
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();
            return XFER_ERROR_NOT_READY;
        }
        if (auto st = check(err, "cudaEventElapsedTime")) {
            return st;
        }
        *ms = value;
        return XFER_SUCCESS;
    });
}

}  // namespace xfer::cuda

#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda {
namespace {
cudaStream_t as_stream(void *stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t as_event(void *event) { return static_cast<cudaEvent_t>(event); }
}  // namespace

xfer_status stream_create(void *ctx, void **stream) {
    return guarded("stream_create", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        cudaStream_t s = nullptr;
        if (auto st = check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                            "cudaStreamCreateWithFlags(cudaStreamNonBlocking)")) {
            return st;
        }
        *stream = s;
        return XFER_SUCCESS;
    });
}

xfer_status stream_destroy(void *ctx, void *stream) {
    return guarded("stream_destroy", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        // Destroy even when the wait reports an earlier asynchronous failure: the core drops
        // the handle either way, and cudaStreamDestroy itself defers the release until queued
        // work is done.
        const xfer_status waited = check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
        const xfer_status destroyed = check(cudaStreamDestroy(as_stream(stream)), "cudaStreamDestroy");
        return last_failure(waited, destroyed);
    });
}

xfer_status stream_synchronize(void *ctx, void *stream) {
    return guarded("stream_synchronize", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        return check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
    });
}

xfer_status stream_query(void *ctx, void *stream) {
    return guarded("stream_query", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        const cudaError_t err = cudaStreamQuery(as_stream(stream));
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();  // not a failure: keep it out of the application's last error
            return XFER_ERROR_NOT_READY;
        }
        return check(err, "cudaStreamQuery");
    });
}

xfer_status stream_wait_event(void *ctx, void *stream, void *event) {
    return guarded("stream_wait_event", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        return check(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), "cudaStreamWaitEvent");
    });
}

xfer_status stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data) {
    return guarded("stream_launch_host_func", [&] {
        if (auto st = activate(as_context(ctx))) {
            return st;
        }
        // xfer_host_fn and cudaHostFn_t have the same C signature: void (*)(void *).
        return check(cudaLaunchHostFunc(as_stream(stream), fn, user_data), "cudaLaunchHostFunc");
    });
}

void *stream_native(void * /*ctx*/, void *stream) { return stream; }

}  // namespace xfer::cuda

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
    return on_device("stream_create", ctx, [&](const Context &) {
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
    return on_device("stream_destroy", ctx, [&](const Context &) {
        // Destroy even when the wait reports an earlier asynchronous failure: the core drops
        // the handle either way, and cudaStreamDestroy itself defers the release until queued
        // work is done.
        const xfer_status waited = check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
        const xfer_status destroyed = check(cudaStreamDestroy(as_stream(stream)), "cudaStreamDestroy");
        return last_failure(waited, destroyed);
    });
}

xfer_status stream_synchronize(void *ctx, void *stream) {
    return on_device("stream_synchronize", ctx, [&](const Context &) {
        return check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
    });
}

xfer_status stream_query(void *ctx, void *stream) {
    return on_device("stream_query", ctx, [&](const Context &) {
        return check_query(cudaStreamQuery(as_stream(stream)), "cudaStreamQuery");
    });
}

xfer_status stream_wait_event(void *ctx, void *stream, void *event) {
    return on_device("stream_wait_event", ctx, [&](const Context &) {
        return check(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), "cudaStreamWaitEvent");
    });
}

xfer_status stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data) {
    return on_device("stream_launch_host_func", ctx, [&](const Context &) {
        // xfer_host_fn and cudaHostFn_t have the same C signature: void (*)(void *).
        return check(cudaLaunchHostFunc(as_stream(stream), fn, user_data), "cudaLaunchHostFunc");
    });
}

void *stream_native(void * /*ctx*/, void *stream) { return stream; }

}  // namespace xfer::cuda

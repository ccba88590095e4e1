// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"

namespace xfer::cuda {
namespace {
cudaStream_t as_stream(void *stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t as_event(void *event) { return static_cast<cudaEvent_t>(event); }

// A failure of work the backend's hook queued on the stream (a staged copy), once the stream
// has been waited for: reported here, since no call was there to return it.
xfer_status hook_error(const Context &c, cudaStream_t s) {
    HostCopyHook *hook = c.host_copy_hook();
    return hook != nullptr ? hook->take_stream_error(s) : XFER_SUCCESS;
}
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
    return on_device("stream_destroy", ctx, [&](const Context &c) {
        // Destroy even when the wait reports an earlier asynchronous failure: the core drops
        // the handle either way, and cudaStreamDestroy itself defers the release until queued
        // work is done.
        xfer_status waited = check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize");
        waited = last_failure(waited, hook_error(c, as_stream(stream)));
        const xfer_status destroyed = check(cudaStreamDestroy(as_stream(stream)), "cudaStreamDestroy");
        return last_failure(waited, destroyed);
    });
}

xfer_status stream_synchronize(void *ctx, void *stream) {
    return on_device("stream_synchronize", ctx, [&](const Context &c) {
        if (auto st = check(cudaStreamSynchronize(as_stream(stream)), "cudaStreamSynchronize")) {
            return st;
        }
        return hook_error(c, as_stream(stream));
    });
}

xfer_status stream_query(void *ctx, void *stream) {
    return on_device("stream_query", ctx, [&](const Context &c) {
        if (auto st = check_query(cudaStreamQuery(as_stream(stream)), "cudaStreamQuery")) {
            return st;
        }
        return hook_error(c, as_stream(stream));
    });
}

xfer_status stream_wait_event(void *ctx, void *stream, void *event) {
    return on_device("stream_wait_event", ctx, [&](const Context &) {
        return check(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), "cudaStreamWaitEvent");
    });
}

namespace {
// A host function may write host memory: until it has run, a direct copy from pageable memory
// on its stream must wait (HostWriteTracker). The trampoline runs the user's function, then
// says so; it makes no CUDA call, as host functions must not.
struct HostCall {
    xfer_host_fn fn;
    void *user_data;
    HostWriteTracker *tracker;
    cudaStream_t stream;
};

void run_host_call(void *arg) {
    auto *call = static_cast<HostCall *>(arg);
    call->fn(call->user_data);
    call->tracker->end(call->stream);
    delete call;
}
}  // namespace

xfer_status stream_launch_host_func(void *ctx, void *stream, xfer_host_fn fn, void *user_data) {
    return on_device("stream_launch_host_func", ctx, [&](const Context &c) {
        auto *call = new HostCall{fn, user_data, &c.host_writes, as_stream(stream)};
        c.host_writes.begin(call->stream);
        const xfer_status st = check(cudaLaunchHostFunc(call->stream, run_host_call, call), "cudaLaunchHostFunc");
        if (st != XFER_SUCCESS) {
            c.host_writes.end(call->stream);
            delete call;
        }
        return st;
    });
}

void *stream_native(void * /*ctx*/, void *stream) { return stream; }

}  // namespace xfer::cuda

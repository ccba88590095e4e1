// SPDX-License-Identifier: Apache-2.0
// The CUDA objects a context hands out: streams and events (their void* is the cudaStream_t
// or cudaEvent_t itself), and the event of a reusable slot.
#include "entries.hpp"
#include "xfer_cuda/context.hpp"

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

// cudaStreamSynchronize; after a failure the hook's host work on `s` is given up first, since
// the caller is about to say that the stream's work is over.
xfer_status wait_for_stream(const Context &c, cudaStream_t s) {
    const cudaError_t synced = cudaStreamSynchronize(s);
    const xfer_status st = check(synced, "cudaStreamSynchronize");
    if (st != XFER_SUCCESS) {
        abandon_host_work(c, synced, s);
    }
    return st;
}
} // namespace

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

namespace {
// What releasing any stream object does before the native stream is destroyed or handed back:
// waits for its queued work, reports what the backend's hook left on it, forgets it there.
xfer_status retire_stream(const Context &c, cudaStream_t s) {
    xfer_status waited = wait_for_stream(c, s);
    waited = last_failure(waited, hook_error(c, s));
    if (HostCopyHook *hook = c.host_copy_hook()) {
        hook->stream_destroyed(s);
    }
    return waited;
}
} // namespace

xfer_status stream_destroy(void *ctx, void *stream) {
    return on_device("stream_destroy", ctx, [&](const Context &c) {
        // Destroy even when the wait reports an earlier asynchronous failure: the core drops
        // the handle either way, and cudaStreamDestroy itself defers the release until queued
        // work is done.
        const xfer_status waited = retire_stream(c, as_stream(stream));
        const xfer_status destroyed = check(cudaStreamDestroy(as_stream(stream)), "cudaStreamDestroy");
        return last_failure(waited, destroyed);
    });
}

xfer_status stream_wrap(void *ctx, void *native, void **stream) {
    return on_device("stream_wrap", ctx, [&](const Context &c) {
        // NULL is the legacy default stream, named by its handle so that the wrapper's native
        // stream is never NULL (xfer_stream_native's failure value).
        cudaStream_t s = native != nullptr ? as_stream(native) : cudaStreamLegacy;
        int device = -1;
        if (auto st = check(cudaStreamGetDevice(s, &device), "cudaStreamGetDevice(%p)", native)) {
            return st;
        }
        if (device != c.device) {
            return fail(XFER_ERROR_INVALID_ARGUMENT,
                        "stream_wrap: stream %p belongs to device %d, the context to device %d (wrap it with a "
                        "context of device %d)",
                        native, device, c.device, device);
        }
        *stream = s;
        return XFER_SUCCESS;
    });
}

xfer_status stream_unwrap(void *ctx, void *stream) {
    return on_device("stream_unwrap", ctx, [&](const Context &c) { return retire_stream(c, as_stream(stream)); });
}

xfer_status stream_synchronize(void *ctx, void *stream) {
    return on_device("stream_synchronize", ctx, [&](const Context &c) {
        if (auto st = wait_for_stream(c, as_stream(stream))) {
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
} // namespace

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

// --------------------------------------------------------------------------- events

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
    return on_device("event_destroy", ctx,
                     [&](const Context &) { return check(cudaEventDestroy(as_event(event)), "cudaEventDestroy"); });
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
    return on_device("event_query", ctx,
                     [&](const Context &) { return check_query(cudaEventQuery(as_event(event)), "cudaEventQuery"); });
}

xfer_status event_elapsed_ms(void *ctx, void *start, void *end, float *ms) {
    return on_device("event_elapsed_ms", ctx, [&](const Context &) {
        float value = 0.0f;
        if (auto st =
                check_query(cudaEventElapsedTime(&value, as_event(start), as_event(end)), "cudaEventElapsedTime")) {
            return st;
        }
        *ms = value;
        return XFER_SUCCESS;
    });
}

void *event_native(void * /*ctx*/, void *event) { return event; }

// ---------------------------------------------------------------------- slot events

xfer_status retire_slot_event(cudaEvent_t *done, const char *what) noexcept {
    if (*done == nullptr) {
        return XFER_SUCCESS;
    }
    const xfer_status waited = check(cudaEventSynchronize(*done), "cudaEventSynchronize(%s)", what);
    const xfer_status destroyed = check(cudaEventDestroy(*done), "cudaEventDestroy(%s)", what);
    *done = nullptr;
    return last_failure(waited, destroyed);
}

} // namespace xfer::cuda

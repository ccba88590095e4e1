// SPDX-License-Identifier: Apache-2.0
// Streams: in-order queues of work.
#include <memory>

#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

struct HostCall {
    xfer_host_fn fn;
    void *user_data;
    static void run(void *self) {
        std::unique_ptr<HostCall> call(static_cast<HostCall *>(self));
        run_host_function(call->fn, call->user_data);
    }
};

} // namespace

extern "C" {

XFER_API xfer_status xfer_stream_create(xfer_context ctx, xfer_stream *s) {
    constexpr const char *fn = "xfer_stream_create";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (s == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": s is NULL");
        ContextUse use(*context, fn);
        auto record = std::make_shared<Stream>();
        record->ctx = context;
        const std::uint64_t handle = create_child(record, fn, [&](Stream &stream) {
            return context->table().stream_create(context->native, &stream.native);
        });
        *s = reinterpret_cast<xfer_stream>(handle);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_stream_destroy(xfer_stream s) {
    constexpr const char *fn = "xfer_stream_destroy";
    return guard(fn, [&] {
        refuse_in_host_function(fn);
        retire(lookup<Stream>(s, fn, "s"), s, fn, "s");
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_stream_synchronize(xfer_stream s) {
    constexpr const char *fn = "xfer_stream_synchronize";
    return guard(fn, [&] {
        refuse_in_host_function(fn);
        return call_on_object<Stream, &xfer_backend_table::stream_synchronize>(s, fn, "s", "stream_synchronize");
    });
}

XFER_API xfer_status xfer_stream_query(xfer_stream s) {
    constexpr const char *fn = "xfer_stream_query";
    return guard(fn, [&] {
        return call_on_object<Stream, &xfer_backend_table::stream_query>(
            s, fn, "s", "stream_query", "xfer_stream_query: work queued on the stream has not finished yet");
    });
}

XFER_API xfer_status xfer_stream_wait_event(xfer_stream s, xfer_event e) {
    constexpr const char *fn = "xfer_stream_wait_event";
    return guard(fn, [&] {
        auto stream = lookup<Stream>(s, fn, "s");
        auto event = lookup<Event>(e, fn, "e");
        Context &c = *stream->ctx;
        require_same_context(c, *event, fn, "event e", "stream s");
        ContextUse use(c, fn);
        ObjectUse stream_use(*stream, fn, "s");
        ObjectUse event_use(*event, fn, "e");
        if (c.table().stream_wait_event == nullptr) raise_not_supported(c, fn);
        call_backend(*c.plugin, fn, "stream_wait_event",
                     [&] { return c.table().stream_wait_event(c.native, stream->native, event->native); });
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_stream_launch_host_func(xfer_stream s, xfer_host_fn host_fn, void *user_data) {
    constexpr const char *fn = "xfer_stream_launch_host_func";
    return guard(fn, [&] {
        auto stream = lookup<Stream>(s, fn, "s");
        if (host_fn == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": fn is NULL");
        Context &c = *stream->ctx;
        ContextUse use(c, fn);
        ObjectUse stream_use(*stream, fn, "s");
        if (c.table().stream_launch_host_func == nullptr) raise_not_supported(c, fn);
        // Queued through a trampoline that marks the thread as running a host function, so
        // that a blocking xfer call from inside it is refused instead of deadlocking.
        auto call = std::make_unique<HostCall>(HostCall{host_fn, user_data});
        call_backend(*c.plugin, fn, "stream_launch_host_func", [&] {
            return c.table().stream_launch_host_func(c.native, stream->native, &HostCall::run, call.get());
        });
        call.release(); // the trampoline owns it now
        return XFER_SUCCESS;
    });
}

XFER_API void *xfer_stream_native(xfer_stream s) {
    constexpr const char *fn = "xfer_stream_native";
    return guard_value<void *>(fn, nullptr, [&]() -> void * {
        InUse<Stream> use(s, fn, "s");
        Context &c = use.ctx;
        if (c.table().stream_native == nullptr) raise_not_supported(c, fn);
        void *native = c.table().stream_native(c.native, use.object->native);
        if (native == nullptr) raise(XFER_ERROR_BACKEND, fn, ": backend '", c.name(), "' returned no native stream");
        return native;
    });
}

} // extern "C"

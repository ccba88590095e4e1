// SPDX-License-Identifier: Apache-2.0
// Streams: in-order queues of work.
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>

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

// The native stream of `stream`, a live stream of `ctx`; nullptr when it was released meanwhile.
void *native_of(Context &ctx, Stream &stream) {
    GatePass pass(stream.lifetime);
    if (!pass.inside() || ctx.table().stream_native == nullptr) return nullptr;
    return ctx.table().stream_native(ctx.native, stream.native);
}

// Throws XFER_ERROR_INVALID_STATE when `native` already is the native stream of a live stream
// of `ctx` (one it created, or one it wrapped): two xfer_streams over one native stream would
// each believe it holds that stream's xfer work alone.
void refuse_second_stream(Context &ctx, void *native, const Stream &wrapper, const char *function) {
    std::unordered_set<std::uint64_t> handles;
    {
        std::lock_guard<std::mutex> children(ctx.children_mutex);
        handles = ctx.streams;
    }
    for (std::uint64_t h : handles) {
        std::shared_ptr<Stream> other = stream_table().lookup(h);
        if (!other || other.get() == &wrapper) continue;
        if (native_of(ctx, *other) == native) {
            raise(XFER_ERROR_INVALID_STATE, function, ": native stream ", native, " already is stream 0x", std::hex, h,
                  " of this context", other->wrapped ? " (wrapped)" : " (created by xfer_stream_create)",
                  ": use that stream, or destroy it first");
        }
    }
}

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

XFER_API xfer_status xfer_stream_wrap(xfer_context ctx, void *native, xfer_stream *s) {
    constexpr const char *fn = "xfer_stream_wrap";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (s == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": s is NULL");
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.stream_wrap == nullptr || t.stream_unwrap == nullptr || t.stream_native == nullptr) {
            raise_not_supported(*context, fn);
        }
        std::lock_guard<std::mutex> one_at_a_time(context->wrap_mutex);
        auto record = std::make_shared<Stream>();
        record->ctx = context;
        record->wrapped = true;
        call_backend(*context->plugin, fn, "stream_wrap",
                     [&] { return t.stream_wrap(context->native, native, &record->native); });
        try {
            refuse_second_stream(*context, t.stream_native(context->native, record->native), *record, fn);
        } catch (...) {
            (void)t.stream_unwrap(context->native, record->native); // the refusal is what is reported
            throw;
        }
        *s = reinterpret_cast<xfer_stream>(adopt(record, fn));
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
    return guard_value<void *>(fn, nullptr, [&] {
        return native_of_object<Stream, &xfer_backend_table::stream_native>(s, fn, "s", "stream");
    });
}

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
// Events: markers in a stream for completion and timing.
#include <functional>

#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

void check_timing(const Event &e, const char *arg) {
    if ((e.flags & XFER_EVENT_DISABLE_TIMING) != 0) {
        raise(XFER_ERROR_INVALID_STATE, "xfer_event_elapsed_ms: ", arg, " was created with XFER_EVENT_DISABLE_TIMING");
    }
    if (!e.recorded.load()) raise(XFER_ERROR_INVALID_STATE, "xfer_event_elapsed_ms: ", arg, " was never recorded");
}

// One thread waiting in xfer_event_synchronize, counted in the event's waiters from the moment
// it was inside the event's gate; the last one out after a release destroys the native event
// (its status is not this call's: the wait's is).
class WaitingOn {
  public:
    WaitingOn(Event &event, const char *function) : event_(event) {
        ObjectUse inside(event, function, "e");
        event.waiters.arrive();
    }
    ~WaitingOn() {
        if (event_.waiters.depart()) (void)destroy_native(*event_.ctx, event_);
    }
    WaitingOn(const WaitingOn &) = delete;
    WaitingOn &operator=(const WaitingOn &) = delete;

  private:
    Event &event_;
};

} // namespace

extern "C" {

XFER_API xfer_status xfer_event_create(xfer_context ctx, unsigned flags, xfer_event *e) {
    constexpr const char *fn = "xfer_event_create";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (e == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": e is NULL");
        if ((flags & ~XFER_EVENT_DISABLE_TIMING) != 0) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": flags 0x", std::hex, flags, " has unknown bits 0x",
                  flags & ~XFER_EVENT_DISABLE_TIMING, " (known: XFER_EVENT_DISABLE_TIMING 0x1)");
        }
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.event_create == nullptr || t.event_destroy == nullptr) raise_not_supported(*context, fn);
        auto record = std::make_shared<Event>();
        record->ctx = context;
        record->flags = flags;
        const std::uint64_t handle = create_child(
            record, fn, [&](Event &event) { return t.event_create(context->native, flags, &event.native); });
        *e = reinterpret_cast<xfer_event>(handle);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_event_destroy(xfer_event e) {
    constexpr const char *fn = "xfer_event_destroy";
    return guard(fn, [&] {
        retire(lookup<Event>(e, fn, "e"), e, fn, "e");
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_event_record(xfer_event e, xfer_stream s) {
    constexpr const char *fn = "xfer_event_record";
    return guard(fn, [&] {
        auto event = lookup<Event>(e, fn, "e");
        auto stream = lookup<Stream>(s, fn, "s");
        Context &c = *event->ctx;
        require_same_context(c, *stream, fn, "stream s", "event e");
        ContextUse use(c, fn);
        ObjectUse stream_use(*stream, fn, "s");
        ObjectUse event_use(*event, fn, "e");
        if (c.table().event_record == nullptr) raise_not_supported(c, fn);
        call_backend(*c.plugin, fn, "event_record",
                     [&] { return c.table().event_record(c.native, event->native, stream->native); });
        event->recorded.store(true);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_event_synchronize(xfer_event e) {
    constexpr const char *fn = "xfer_event_synchronize";
    return guard(fn, [&] {
        refuse_in_host_function(fn);
        auto event = lookup<Event>(e, fn, "e");
        Context &c = *event->ctx;
        // The context stays held for the whole wait (xfer_close waits for it); the event's gate
        // only until this thread counts as a waiter (EventWaiters: a release never waits for it).
        ContextUse use(c, fn);
        const xfer_backend_table &t = c.table();
        if (t.event_synchronize == nullptr) raise_not_supported(c, fn);
        WaitingOn waiting(*event, fn);
        call_backend(*c.plugin, fn, "event_synchronize", [&] { return t.event_synchronize(c.native, event->native); });
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_event_query(xfer_event e) {
    constexpr const char *fn = "xfer_event_query";
    return guard(fn, [&] {
        return call_on_object<Event, &xfer_backend_table::event_query>(
            e, fn, "e", "event_query", "xfer_event_query: the work before the event has not finished yet");
    });
}

XFER_API xfer_status xfer_event_elapsed_ms(xfer_event start, xfer_event end, float *ms) {
    constexpr const char *fn = "xfer_event_elapsed_ms";
    return guard(fn, [&] {
        auto first = lookup<Event>(start, fn, "start");
        auto last = lookup<Event>(end, fn, "end");
        Context &c = *first->ctx;
        require_same_context(c, *last, fn, "event end", "event start");
        if (ms == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": ms is NULL");
        check_timing(*first, "start");
        check_timing(*last, "end");
        ContextUse use(c, fn);
        // Two locks of one kind in address order; one lock when both are the same event
        // (a shared lock taken twice by one thread can deadlock behind a waiting writer).
        Event *low = std::less<Event *>()(first.get(), last.get()) ? first.get() : last.get();
        Event *high = low == first.get() ? last.get() : first.get();
        ObjectUse low_use(*low, fn, low == first.get() ? "start" : "end");
        ObjectUse high_use;
        if (high != low) high_use = ObjectUse(*high, fn, high == first.get() ? "start" : "end");
        if (c.table().event_elapsed_ms == nullptr) raise_not_supported(c, fn);
        float result = 0.0f;
        xfer_status st = call_backend(
            *c.plugin, fn, "event_elapsed_ms",
            [&] { return c.table().event_elapsed_ms(c.native, first->native, last->native, &result); },
            XFER_ERROR_NOT_READY);
        if (st == XFER_ERROR_NOT_READY) return fail(st, "xfer_event_elapsed_ms: an event has not completed yet");
        *ms = result;
        return XFER_SUCCESS;
    });
}

XFER_API void *xfer_event_native(xfer_event e) {
    constexpr const char *fn = "xfer_event_native";
    return guard_value<void *>(
        fn, nullptr, [&] { return native_of_object<Event, &xfer_backend_table::event_native>(e, fn, "e", "event"); });
}

} // extern "C"

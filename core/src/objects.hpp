// SPDX-License-Identifier: Apache-2.0
// The records behind the opaque handles, the tables that hold them, and the rules for
// using them from many threads at once.
//
// Lifetime rule: every entry point that uses an object is inside its context's `lifetime` gate,
// then inside the objects' own gates, for the whole backend call (lifetime_gate.hpp). Release
// (xfer_free, *_destroy) is inside the context's gate and closes the object's; xfer_close
// closes the context's. Closing waits for the calls inside, and no call enters a closing gate.
// So a backend never sees an object released under its feet, and a call racing a release
// either completes first or finds the object gone (XFER_ERROR_INVALID_HANDLE). Gates are
// entered context first, then buffer, stream, event.
//
// One exception, for the hottest entry (xfer_memcpy_async): a call that holds a child object's
// gate may skip its context's, since xfer_close closes every child's gate (waiting for the
// calls inside) before it destroys the context's native object (retire_all). The context's
// record stays alive through the call's lookup entry; only a closed context's new calls fail.
// Two atomic read-modify-writes less per small copy (the per-call overhead).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "copy_paths.hpp"
#include "error.hpp"
#include "fork_generation.hpp"
#include "handle_table.hpp"
#include "last_error.hpp"
#include "lifetime_gate.hpp"
#include "memory_events.hpp"
#include "plugin_registry.hpp"
#include "setting.hpp"
#include "thread_lasting.hpp"
#include <xfer/xfer.h>

namespace xfer::core {

struct Context {
    const Plugin *plugin = nullptr; // lives for the process
    void *native = nullptr;
    int device = 0;
    std::uint64_t handle = 0;
    std::uint64_t fork_generation = 0; // fork_generation() at xfer_open (fork_generation.hpp)

    LifetimeGate lifetime;
    std::atomic<bool> closed{false}; // set once the gate is closed; read by lookup()

    // Handles of the objects still owned, released by xfer_close.
    std::mutex children_mutex;
    std::unordered_set<std::uint64_t> buffers, streams, events;

    // Held by xfer_stream_wrap from its check that the native stream is not yet a live stream
    // of this context until the new stream is adopted, so two wraps of one stream cannot race.
    std::mutex wrap_mutex;

    // The stream xfer_copy uses, created on first use.
    std::mutex internal_stream_mutex;
    void *internal_stream = nullptr;

    // Which paths its copies took, its observer and slow-path policy (copy_paths.hpp).
    CopyStats stats;
    // Its memory observer (memory_events.hpp).
    MemoryEvents memory_events;
    // Its backend's parameters and derived values as xfer_open read them (set before the
    // handle is published, never changed): xfer_context_get_setting's rows.
    std::vector<Setting> params;
    std::vector<Setting> derived;

    const xfer_backend_table &table() const { return plugin->table; }
    const std::string &name() const { return plugin->name; }
};

// What a copy call (copy_paths.hpp) needs of ctx.
inline CopyContext copy_context(Context &ctx) noexcept { return CopyContext{ctx.stats, ctx.name(), ctx.handle}; }

// What every child object has: its owning context and a release lock.
struct ChildObject {
    std::shared_ptr<Context> ctx;
    void *native = nullptr;
    std::uint64_t handle = 0;
    LifetimeGate lifetime;
    std::atomic<bool> released{false}; // set once released (its gate, or the context's, closed)
};

struct Buffer : ChildObject {
    std::size_t bytes = 0;
    void *host_view = nullptr;
    void *device_view = nullptr;
    bool imported = false; // made by xfer_buffer_import
};

// Tells ctx's memory observer of buffer b (memory_events.hpp).
inline void tell_buffer(const Context &ctx, xfer_memory_event_kind event, const Buffer &b) noexcept {
    ctx.memory_events.buffer(reinterpret_cast<xfer_context>(ctx.handle), event, reinterpret_cast<xfer_buffer>(b.handle),
                             b.host_view, b.device_view, b.bytes, b.imported);
}

struct Stream : ChildObject {
    bool wrapped = false; // made by xfer_stream_wrap: released with stream_unwrap, never destroyed
};

// Threads blocked in xfer_event_synchronize wait outside the event's gate: a release must
// not wait for them, since what they wait for may be up to the releasing thread (a host
// function it would open after the release). They count themselves here instead, and the
// native event goes when both the release and the last of them are done, whichever comes last.
class EventWaiters {
  public:
    void arrive() noexcept { state_.fetch_add(1, std::memory_order_acq_rel); }
    // True for the last waiter out after release(): it destroys the native event.
    bool depart() noexcept { return state_.fetch_sub(1, std::memory_order_acq_rel) == (kReleased | 1u); }
    // True when no thread waits: the releasing thread destroys the native event now.
    bool release() noexcept { return (state_.fetch_or(kReleased, std::memory_order_acq_rel) & ~kReleased) == 0; }

  private:
    static constexpr std::uint32_t kReleased = 0x80000000u;
    std::atomic<std::uint32_t> state_{0}; // kReleased | threads waiting
};

struct Event : ChildObject {
    unsigned flags = 0;
    std::atomic<bool> recorded{false};
    EventWaiters waiters;
};

HandleTable<Context> &context_table();
HandleTable<Buffer> &buffer_table();
HandleTable<Stream> &stream_table();
HandleTable<Event> &event_table();

template <class T>
constexpr HandleKind kind_of();
template <>
constexpr HandleKind kind_of<Context>() {
    return HandleKind::context;
}
template <>
constexpr HandleKind kind_of<Buffer>() {
    return HandleKind::buffer;
}
template <>
constexpr HandleKind kind_of<Stream>() {
    return HandleKind::stream;
}
template <>
constexpr HandleKind kind_of<Event>() {
    return HandleKind::event;
}

template <class T>
HandleTable<T> &table_of();
template <>
inline HandleTable<Context> &table_of<Context>() {
    return context_table();
}
template <>
inline HandleTable<Buffer> &table_of<Buffer>() {
    return buffer_table();
}
template <>
inline HandleTable<Stream> &table_of<Stream>() {
    return stream_table();
}
template <>
inline HandleTable<Event> &table_of<Event>() {
    return event_table();
}

// Throws Error(XFER_ERROR_INVALID_HANDLE) saying what is wrong with argument `arg` of
// `function`: NULL, not a handle, the wrong kind, or no longer live.
[[noreturn]] void raise_bad_handle(const char *function, const char *arg, const void *handle, HandleKind expected,
                                   LookupError why);

// Throws XFER_ERROR_INVALID_STATE when `ctx` was opened before the fork() that made this
// process (xfer.h, "fork()"): its worker threads and device state do not exist here.
[[noreturn]] void raise_inherited(const char *function, const char *arg);
inline void refuse_inherited(const Context &ctx, const char *function, const char *arg) {
    if (ctx.fork_generation != fork_generation()) raise_inherited(function, arg);
}
inline const Context &owner_of(const Context &ctx) { return ctx; }
inline const Context &owner_of(const ChildObject &object) { return *object.ctx; }

// Throws XFER_ERROR_INVALID_STATE when called from a host function running on a stream
// (xfer_stream_launch_host_func): `function` would wait for the stream running the caller.
void refuse_in_host_function(const char *function);
// Runs a host function queued by xfer_stream_launch_host_func, marked as such for the above.
void run_host_function(xfer_host_fn fn, void *user_data);

inline bool gone(const Context &ctx) { return ctx.closed.load(std::memory_order_acquire); }
inline bool gone(const ChildObject &object) { return object.released.load(std::memory_order_acquire); }

// The calling thread's last few lookups of objects of kind T. Every API call looks up its
// handles, and the table's lock plus the copy out of it were most of the core's share of a
// small copy's host time (the per-call overhead); a call with the handle of a recent
// call skips the table. An entry answers only while its object is neither released nor closed
// (a released one goes the table's way, which says why the handle is not live); handle values
// are never issued twice, so a value names one object for the life of the process. Entries keep
// their records alive until replaced or the thread ends, never the native objects (those go at
// release, as always).
template <class T>
class RecentLookups {
  public:
    // The entry answering for `handle` (its object neither released nor closed), or nullptr.
    // It holds its record until remember() replaces it.
    const std::shared_ptr<T> *find(std::uint64_t handle) const {
        for (std::size_t i = 0; i < kEntries; ++i) {
            if (handles_[i] == handle && !gone(*objects_[i])) return &objects_[i];
        }
        return nullptr;
    }
    const std::shared_ptr<T> &remember(std::uint64_t handle, std::shared_ptr<T> object) {
        const std::size_t i = next_;
        handles_[i] = handle;
        objects_[i] = std::move(object);
        next_ = (next_ + 1) % kEntries;
        return objects_[i];
    }

  private:
    static constexpr std::size_t kEntries = 4;
    std::uint64_t handles_[kEntries] = {};
    std::shared_ptr<T> objects_[kEntries];
    std::size_t next_ = 0;
};

// The calling thread's recent lookups of every kind, in one thread-local record: each
// thread-local object of a shared library is found through a call (__tls_get_addr), and one
// record per kind would cost a small copy a call per handle (the per-call overhead).
// It lasts past the runtime's destruction of thread-locals (thread_lasting.hpp): entry points
// called from exit handlers still find it, empty.
struct RecentObjects {
    RecentLookups<Context> contexts;
    RecentLookups<Buffer> buffers;
    RecentLookups<Stream> streams;
    RecentLookups<Event> events;
    void release() noexcept { *this = RecentObjects(); } // the thread ended: drop every record
};
struct RecentObjectsTag;

// The calling thread's record. The compiler recomputes a thread-local's address (a call) at
// each use, so an entry that looks up several handles takes it once, kept opaque to it.
inline RecentObjects &this_thread_objects() noexcept {
    RecentObjects *objects = &ThreadLasting<RecentObjects, RecentObjectsTag>::get();
    asm("" : "+r"(objects));
    return *objects;
}

template <class T>
RecentLookups<T> &recent_lookups(RecentObjects &recent = this_thread_objects()) {
    if constexpr (std::is_same_v<T, Context>) {
        return recent.contexts;
    } else if constexpr (std::is_same_v<T, Buffer>) {
        return recent.buffers;
    } else if constexpr (std::is_same_v<T, Stream>) {
        return recent.streams;
    } else {
        static_assert(std::is_same_v<T, Event>, "a kind of object behind a handle");
        return recent.events;
    }
}

// A handle this thread has not looked up lately (or whose entry went): the table's answer,
// remembered, or throws (raise_bad_handle). Out of line: the first call with a handle only.
template <class T>
[[gnu::noinline]] const std::shared_ptr<T> &look_up_and_remember(RecentLookups<T> &recent, const void *handle,
                                                                 const char *function, const char *arg) {
    const auto value = reinterpret_cast<std::uintptr_t>(handle);
    LookupError why = LookupError::none;
    std::shared_ptr<T> found = table_of<T>().lookup(value, &why);
    if (!found) raise_bad_handle(function, arg, handle, kind_of<T>(), why);
    return recent.remember(value, std::move(found));
}

// The calling thread's entry for the live object behind a handle (found in RecentLookups, or
// looked up in the table and remembered), or throws (see raise_bad_handle, refuse_inherited).
template <class T>
inline const std::shared_ptr<T> &recent_entry(const void *handle, const char *function, const char *arg,
                                              RecentObjects &objects = this_thread_objects()) {
    const auto value = reinterpret_cast<std::uintptr_t>(handle);
    RecentLookups<T> &recent = recent_lookups<T>(objects);
    const std::shared_ptr<T> *entry = value != 0 ? recent.find(value) : nullptr;
    if (entry == nullptr) entry = &look_up_and_remember(recent, handle, function, arg);
    refuse_inherited(owner_of(**entry), function, arg);
    return *entry;
}

// The live object behind a handle, or throws.
template <class T>
std::shared_ptr<T> lookup(const void *handle, const char *function, const char *arg) {
    return recent_entry<T>(handle, function, arg);
}

// The same object, without a shared_ptr copy (an atomic increment and decrement: a measurable
// part of a small copy's host time, the per-call overhead). The reference is kept valid by the
// calling thread's RecentLookups entry, which only a later lookup of a kind-T object on this
// thread can replace; so a caller looks up at most one object of each kind this way per call,
// and enters its gate (ContextUse, ObjectUse) before the call ends. No other lookup runs on the
// thread meanwhile: backend entries never call back into the API (xfer_backend.h).
// `objects`: the thread's record, read once by a caller that looks up several handles.
template <class T>
T &lookup_ref(const void *handle, const char *function, const char *arg,
              RecentObjects &objects = this_thread_objects()) {
    return *recent_entry<T>(handle, function, arg, objects);
}

// The failures of ContextUse and ObjectUse below (out of line: they are rare).
[[noreturn]] void raise_context_closed(const char *function);
[[noreturn]] void raise_object_released(const char *function, const char *arg);

// Holds a context open for one call (inside its gate), or throws if it was closed meanwhile.
class ContextUse {
  public:
    ContextUse(Context &ctx, const char *function) : pass_(ctx.lifetime) {
        if (!pass_.inside()) raise_context_closed(function);
    }

  private:
    GatePass pass_;
};

// Holds an object unreleased for one call (inside its gate), or throws if it was released
// meanwhile.
class ObjectUse {
  public:
    ObjectUse(ChildObject &object, const char *function, const char *arg) : pass_(object.lifetime) {
        if (!pass_.inside()) raise_object_released(function, arg);
    }
    ObjectUse() = default;

  private:
    GatePass pass_;
};

// One object used by one call: looked up by its handle, its context held open (ContextUse)
// and the object held unreleased (ObjectUse) until the call returns.
template <class T>
struct InUse {
    InUse(const void *handle, const char *function, const char *arg)
        : object(lookup<T>(handle, function, arg)), ctx(*object->ctx), context_use(ctx, function),
          object_use(*object, function, arg) {}
    std::shared_ptr<T> object;
    Context &ctx;
    ContextUse context_use;
    ObjectUse object_use;
};

// Throws INVALID_HANDLE unless `object` belongs to `ctx`.
[[noreturn]] void raise_other_context(const char *function, const char *what, const char *owner);
inline void require_same_context(const Context &ctx, const ChildObject &object, const char *function, const char *what,
                                 const char *owner) {
    if (object.ctx.get() != &ctx) raise_other_context(function, what, owner);
}

// Calls a backend entry and throws its failure as an Error carrying the backend's own
// message. When the backend failed without calling set_error, the message names the backend,
// the entry and the status instead, so xfer_last_error() is never stale or empty.
// Returns the status for entries where a non-success answer is not a failure (NOT_READY).
template <class Call>
xfer_status call_backend(const Plugin &plugin, const char *function, const char *entry, Call &&call,
                         xfer_status also_ok = XFER_SUCCESS) {
    const std::uint64_t before = last_error_generation();
    const xfer_status status = call();
    if (status == XFER_SUCCESS || status == also_ok) return status;
    if (last_error_generation() == before) {
        raise(status, function, ": backend '", plugin.name, "' failed in its ", entry, " entry with ",
              xfer_status_string(status), " and gave no message");
    }
    throw Error(status, last_error());
}

// XFER_ERROR_NOT_SUPPORTED for an optional entry the context's backend leaves NULL.
[[noreturn]] void raise_not_supported(const Context &ctx, const char *function);

// xfer_{stream,event}_{synchronize,query}: the backend entry `Entry` (ctx, native object) on
// the object behind `handle`, NOT_SUPPORTED when the backend leaves it NULL. With
// `not_ready` (a query), XFER_ERROR_NOT_READY is an answer, returned with that message.
template <class T, auto Entry>
xfer_status call_on_object(const void *handle, const char *function, const char *arg, const char *entry,
                           const char *not_ready = nullptr) {
    InUse<T> use(handle, function, arg);
    const xfer_backend_table &t = use.ctx.table();
    if (t.*Entry == nullptr) raise_not_supported(use.ctx, function);
    const xfer_status st = call_backend(
        *use.ctx.plugin, function, entry, [&] { return (t.*Entry)(use.ctx.native, use.object->native); },
        not_ready != nullptr ? XFER_ERROR_NOT_READY : XFER_SUCCESS);
    return st == XFER_ERROR_NOT_READY ? fail(st, not_ready) : st;
}

// xfer_{stream,event}_native: the backend entry `Entry` (ctx, native object) on the object
// behind `handle`; throws NOT_SUPPORTED when the backend leaves it NULL, XFER_ERROR_BACKEND
// when it answers NULL (`what`: "stream", "event"). For guard_value, which turns a throw into NULL.
template <class T, auto Entry>
void *native_of_object(const void *handle, const char *function, const char *arg, const char *what) {
    InUse<T> use(handle, function, arg);
    const xfer_backend_table &t = use.ctx.table();
    if (t.*Entry == nullptr) raise_not_supported(use.ctx, function);
    void *native = (t.*Entry)(use.ctx.native, use.object->native);
    if (native == nullptr)
        raise(XFER_ERROR_BACKEND, function, ": backend '", use.ctx.name(), "' returned no native ", what);
    return native;
}

// ---------------------------------------------------------------------------------------
// The life of an object, in one place: every create entry (xfer_open, xfer_alloc,
// xfer_stream_create, xfer_event_create) and every release (xfer_free, xfer_*_destroy,
// xfer_close) goes through adopt / retire below, so the order of the steps, the locks and
// the rollback are written once.
//
// What differs between the kinds is a table of facts, ObjectKind<T>: the backend entries
// that create and destroy its native object, the context's set that owns its handles (none
// for a context), and the message when its handle table is full.

template <class T>
struct ObjectKind;
template <>
struct ObjectKind<Context> {
    static constexpr const char *too_many = "too many open contexts";
    static constexpr const char *destroy_entry = "context_destroy";
    static xfer_status destroy(const Context &ctx) { return ctx.table().context_destroy(ctx.native); }
};
// A child kind: the backend entry that destroys it (Destroy) and the context's set of its
// handles (Owned); the specialisations below add the names used in messages.
template <auto Destroy, auto Owned>
struct ChildKind {
    static constexpr auto destroy_fn = Destroy;
    static constexpr auto owned = Owned;
};
template <>
struct ObjectKind<Buffer> : ChildKind<&xfer_backend_table::buffer_free, &Context::buffers> {
    static constexpr const char *too_many = "too many live buffers", *create_entry = "buffer_alloc",
                                *destroy_entry = "buffer_free";
};
template <>
struct ObjectKind<Stream> : ChildKind<&xfer_backend_table::stream_destroy, &Context::streams> {
    static constexpr const char *too_many = "too many live streams", *create_entry = "stream_create",
                                *destroy_entry = "stream_destroy";
};
template <>
struct ObjectKind<Event> : ChildKind<&xfer_backend_table::event_destroy, &Context::events> {
    static constexpr const char *too_many = "too many live events", *create_entry = "event_create",
                                *destroy_entry = "event_destroy";
};

// Destroys a child's native object through its context's backend; returns the backend's status.
// A wrapped stream's native stream is the application's: it is unwrapped, never destroyed.
template <class T>
xfer_status destroy_native(const Context &ctx, const T &object) {
    if constexpr (std::is_same_v<T, Stream>) {
        if (object.wrapped) return ctx.table().stream_unwrap(ctx.native, object.native);
    }
    return (ctx.table().*ObjectKind<T>::destroy_fn)(ctx.native, object.native);
}

// Makes `record`, whose native object the backend has just created, a live object: a handle
// in its table and, for a child, an entry in its context's set (which xfer_close releases).
// On any failure nothing stays behind: the handle is taken back, the native object destroyed
// (its status ignored: the failure reported is the one that stopped the adoption), and the
// failure thrown: XFER_ERROR_OUT_OF_MEMORY "<function>: too many ..." when the table is full.
// For a child, the caller holds ContextUse on record->ctx. Returns the handle (also stored in
// record->handle).
template <class T>
std::uint64_t adopt(const std::shared_ptr<T> &record, const char *function) {
    const auto undo = [&] {
        if constexpr (std::is_same_v<T, Context>) {
            ObjectKind<T>::destroy(*record);
        } else {
            destroy_native(*record->ctx, *record);
        }
    };
    std::uint64_t handle = 0;
    try {
        handle = table_of<T>().insert(record);
        if constexpr (!std::is_same_v<T, Context>) {
            if (handle != 0) {
                Context &ctx = *record->ctx;
                std::lock_guard<std::mutex> children(ctx.children_mutex);
                (ctx.*ObjectKind<T>::owned).insert(handle);
            }
        }
    } catch (...) {
        if (handle != 0) table_of<T>().take(handle);
        undo();
        throw;
    }
    if (handle == 0) {
        undo();
        raise(XFER_ERROR_OUT_OF_MEMORY, function, ": ", ObjectKind<T>::too_many);
    }
    record->handle = handle;
    return handle;
}

// The create entries' common path: asks the backend for the native object (`create(record)`
// returns the backend's status; a failure is thrown by call_backend with the backend's
// message) and adopts it. `record` carries its context and what the backend needs (size,
// flags). The caller has checked its arguments and holds ContextUse on record->ctx (taken
// before its own checks of the backend's entries). Returns the handle.
template <class T, class Create>
std::uint64_t create_child(const std::shared_ptr<T> &record, const char *function, Create &&create) {
    const Context &ctx = *record->ctx;
    call_backend(*ctx.plugin, function, ObjectKind<T>::create_entry, [&] { return create(*record); });
    return adopt(record, function);
}

// xfer_free / xfer_stream_destroy / xfer_event_destroy: releases `object`, looked up from
// argument `arg` (value `handle`) of `function`. Holds its context shared, takes the handle
// out of its table first (a second release or a racing call then fails cleanly with
// INVALID_HANDLE), waits for the calls using the object (closing its lifetime gate),
// marks it released, removes it from its context's set and destroys the native object; a
// backend failure there is thrown with the backend's message.
template <class T>
void retire(const std::shared_ptr<T> &object, const void *handle, const char *function, const char *arg) {
    Context &ctx = *object->ctx;
    ContextUse use(ctx, function);
    LookupError why = LookupError::none;
    if (!table_of<T>().take(object->handle, &why)) raise_bad_handle(function, arg, handle, kind_of<T>(), why);
    object->lifetime.close(); // waits for calls using it
    object->released = true;
    {
        std::lock_guard<std::mutex> children(ctx.children_mutex);
        (ctx.*ObjectKind<T>::owned).erase(object->handle);
    }
    if constexpr (std::is_same_v<T, Event>) {
        if (!object->waiters.release()) return; // the last thread in xfer_event_synchronize destroys it
    }
    if constexpr (std::is_same_v<T, Buffer>) tell_buffer(ctx, XFER_MEMORY_RELEASING, *object);
    call_backend(*ctx.plugin, function, ObjectKind<T>::destroy_entry, [&] { return destroy_native(ctx, *object); });
}

// xfer_close: releases the children of kind T a closing context still owned (`handles`,
// swapped out of its set). The caller has closed the context's lifetime gate, so only calls
// that hold a child's gate alone (xfer_memcpy_async: the exception at the top of this file)
// can still use them. Each one still in its table is taken out, its gate closed (waiting for
// such calls), marked released and its native object destroyed; `run(step)` runs each
// destruction (xfer_close passes one that records the first failure and carries on: close
// releases everything).
template <class T, class Run>
void retire_all(const Context &ctx, const std::unordered_set<std::uint64_t> &handles, Run &&run) {
    for (std::uint64_t h : handles) {
        if (auto object = table_of<T>().take(h)) {
            object->lifetime.close(); // waits for calls holding only this object's gate (above)
            object->released = true;
            // Cannot be NULL: the required entries are checked at load and event_create needs
            // event_destroy too; checked all the same, as close must never crash.
            if (ctx.table().*ObjectKind<T>::destroy_fn == nullptr) continue;
            if constexpr (std::is_same_v<T, Buffer>) tell_buffer(ctx, XFER_MEMORY_RELEASING, *object);
            run([&] {
                call_backend(*ctx.plugin, "xfer_close", ObjectKind<T>::destroy_entry,
                             [&] { return destroy_native(ctx, *object); });
            });
        }
    }
}

} // namespace xfer::core

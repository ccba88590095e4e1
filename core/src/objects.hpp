// SPDX-License-Identifier: Apache-2.0
// The records behind the opaque handles, the tables that hold them, and the rules for
// using them from many threads at once.
//
// Lifetime rule: every entry point that uses an object holds its context's `lifetime` lock
// shared, then the objects' own `lifetime` locks shared, for the whole backend call. Release
// (xfer_free, *_destroy) holds the context shared and the object exclusive; xfer_close holds
// the context exclusive. So a backend never sees an object released under its feet, and a
// call racing a release either completes first or finds the object gone
// (XFER_ERROR_INVALID_HANDLE). Locks are always taken context first, then buffer, stream,
// event; two objects of one kind in address order.
#pragma once

#include <xfer/xfer.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

#include "error.hpp"
#include "handle_table.hpp"
#include "last_error.hpp"
#include "plugin_registry.hpp"

namespace xfer::core {

struct Context {
    const Plugin *plugin = nullptr;  // lives for the process
    void *native = nullptr;
    int device = 0;
    std::uint64_t handle = 0;
    std::uint64_t fork_generation = 0;  // fork_generation() at xfer_open (fork_support.hpp)

    std::shared_mutex lifetime;
    bool closed = false;  // written under lifetime exclusive

    // Handles of the objects still owned, released by xfer_close.
    std::mutex children_mutex;
    std::unordered_set<std::uint64_t> buffers, streams, events;

    // The stream xfer_copy uses, created on first use.
    std::mutex internal_stream_mutex;
    void *internal_stream = nullptr;

    const xfer_backend_table &table() const { return plugin->table; }
    const std::string &name() const { return plugin->name; }
};

// What every child object has: its owning context and a release lock.
struct ChildObject {
    std::shared_ptr<Context> ctx;
    void *native = nullptr;
    std::uint64_t handle = 0;
    std::shared_mutex lifetime;
    bool released = false;  // written under lifetime exclusive (or the context's, in xfer_close)
};

struct Buffer : ChildObject {
    std::size_t bytes = 0;
    void *host_view = nullptr;
    void *device_view = nullptr;
};

struct Stream : ChildObject {};

struct Event : ChildObject {
    unsigned flags = 0;
    std::atomic<bool> recorded{false};
};

HandleTable<Context> &context_table();
HandleTable<Buffer> &buffer_table();
HandleTable<Stream> &stream_table();
HandleTable<Event> &event_table();

template <class T> constexpr HandleKind kind_of();
template <> constexpr HandleKind kind_of<Context>() { return HandleKind::context; }
template <> constexpr HandleKind kind_of<Buffer>() { return HandleKind::buffer; }
template <> constexpr HandleKind kind_of<Stream>() { return HandleKind::stream; }
template <> constexpr HandleKind kind_of<Event>() { return HandleKind::event; }

template <class T> HandleTable<T> &table_of();
template <> inline HandleTable<Context> &table_of<Context>() { return context_table(); }
template <> inline HandleTable<Buffer> &table_of<Buffer>() { return buffer_table(); }
template <> inline HandleTable<Stream> &table_of<Stream>() { return stream_table(); }
template <> inline HandleTable<Event> &table_of<Event>() { return event_table(); }

// Throws Error(XFER_ERROR_INVALID_HANDLE) saying what is wrong with argument `arg` of
// `function`: NULL, not a handle, the wrong kind, or no longer live.
[[noreturn]] void raise_bad_handle(const char *function, const char *arg, const void *handle, HandleKind expected,
                                   LookupError why);

// Throws XFER_ERROR_INVALID_STATE when `ctx` was opened before the fork() that made this
// process (xfer.h, "fork()"): its worker threads and device state do not exist here.
void refuse_inherited(const Context &ctx, const char *function, const char *arg);
inline const Context &owner_of(const Context &ctx) { return ctx; }
inline const Context &owner_of(const ChildObject &object) { return *object.ctx; }

// Throws XFER_ERROR_INVALID_STATE when called from a host function running on a stream
// (xfer_stream_launch_host_func): `function` would wait for the stream running the caller.
void refuse_in_host_function(const char *function);
// Runs a host function queued by xfer_stream_launch_host_func, marked as such for the above.
void run_host_function(xfer_host_fn fn, void *user_data);

// The live object behind a handle, or throws (see raise_bad_handle, refuse_inherited).
template <class T>
std::shared_ptr<T> lookup(const void *handle, const char *function, const char *arg) {
    LookupError why = LookupError::none;
    auto object = table_of<T>().lookup(reinterpret_cast<std::uintptr_t>(handle), &why);
    if (!object) raise_bad_handle(function, arg, handle, kind_of<T>(), why);
    refuse_inherited(owner_of(*object), function, arg);
    return object;
}

// Holds a context open for one call (shared), or throws if it was closed meanwhile.
class ContextUse {
public:
    ContextUse(Context &ctx, const char *function);
private:
    std::shared_lock<std::shared_mutex> lock_;
};

// Holds an object unreleased for one call (shared), or throws if it was released meanwhile.
class ObjectUse {
public:
    ObjectUse(ChildObject &object, const char *function, const char *arg);
    ObjectUse() = default;
private:
    std::shared_lock<std::shared_mutex> lock_;
};

// Throws INVALID_HANDLE unless `object` belongs to `ctx`.
void require_same_context(const Context &ctx, const ChildObject &object, const char *function, const char *what,
                          const char *owner);

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

}  // namespace xfer::core

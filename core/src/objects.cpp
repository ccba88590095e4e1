// SPDX-License-Identifier: Apache-2.0
#include "objects.hpp"

#include "error.hpp"
#include "fork_generation.hpp"

namespace xfer::core {

// Tables are leaked on purpose: entry points may run during static destruction (atexit
// handlers of other libraries), and a destroyed table would turn them into crashes.
HandleTable<Context> &context_table() {
    static auto *table = new HandleTable<Context>(HandleKind::context);
    return *table;
}
HandleTable<Buffer> &buffer_table() {
    static auto *table = new HandleTable<Buffer>(HandleKind::buffer);
    return *table;
}
HandleTable<Stream> &stream_table() {
    static auto *table = new HandleTable<Stream>(HandleKind::stream);
    return *table;
}
HandleTable<Event> &event_table() {
    static auto *table = new HandleTable<Event>(HandleKind::event);
    return *table;
}

void raise_bad_handle(const char *function, const char *arg, const void *handle, HandleKind expected, LookupError why) {
    const char *kind = handle_kind_name(expected);
    switch (why) {
    case LookupError::null_handle:
        raise(XFER_ERROR_INVALID_HANDLE, function, ": ", arg, " is NULL (expected a ", kind, " handle)");
    case LookupError::not_a_handle:
        raise(XFER_ERROR_INVALID_HANDLE, function, ": ", arg, " (", handle, ") is not an xfer ", kind, " handle");
    case LookupError::wrong_kind:
        raise(XFER_ERROR_INVALID_HANDLE, function, ": ", arg, " (", handle, ") is a ",
              handle_kind_name(decode_handle(reinterpret_cast<std::uintptr_t>(handle)).kind), " handle, not a ", kind);
    case LookupError::stale:
    case LookupError::none:
        break;
    }
    raise(XFER_ERROR_INVALID_HANDLE, function, ": ", arg, " (", handle, ") is not a live ", kind,
          " (already released, its context was closed, or it was never created)");
}

void raise_context_closed(const char *function) {
    raise(XFER_ERROR_INVALID_HANDLE, function, ": the context was closed by another thread during the call");
}

void raise_object_released(const char *function, const char *arg) {
    raise(XFER_ERROR_INVALID_HANDLE, function, ": ", arg, " was released by another thread during the call");
}

void raise_inherited(const char *function, const char *arg) {
    raise(XFER_ERROR_INVALID_STATE, function, ": ", arg,
          " was created before fork() in a parent process; a child "
          "process cannot use inherited xfer objects (their threads and device state stay in the parent): open a new "
          "context in the child");
}

namespace {
thread_local int t_host_function_depth = 0;
}

void refuse_in_host_function(const char *function) {
    if (t_host_function_depth == 0) return;
    raise(XFER_ERROR_INVALID_STATE, function,
          ": called from a host function queued with xfer_stream_launch_host_func, "
          "where it could wait for the stream running it (host functions must not call xfer functions); nothing was "
          "done");
}

void run_host_function(xfer_host_fn fn, void *user_data) {
    struct Depth {
        Depth() { ++t_host_function_depth; }
        ~Depth() { --t_host_function_depth; }
    } depth;
    fn(user_data);
}

void raise_other_context(const char *function, const char *what, const char *owner) {
    raise(XFER_ERROR_INVALID_HANDLE, function, ": ", what, " belongs to another context than ", owner);
}

void raise_not_supported(const Context &ctx, const char *function) {
    raise(XFER_ERROR_NOT_SUPPORTED, "backend '", ctx.name(), "' does not implement ", function);
}

} // namespace xfer::core

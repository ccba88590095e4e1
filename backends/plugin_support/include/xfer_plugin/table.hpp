// SPDX-License-Identifier: Apache-2.0
// What every plugin table starts with, and the capability bits (XFER_CAP_*) derived from what a
// strategy's buffers are, so that a table never states a capability its strategy lacks.
#pragma once

#include <cstddef>

#include <xfer/xfer_backend.h>

namespace xfer::plugin {

// Where a buffer's two views live.
enum class Views {
    separate, // two allocations (host RAM and device memory, or an emulated device's copy)
    shared,   // one memory that host and device both address (managed, mapped)
};

// What a buffer copy (xfer_copy_async) does with the bytes.
enum class Movement {
    copy,    // copies them between the two views
    migrate, // moves the pages of the one memory (managed prefetch)
    none,    // nothing: the views are one memory already; the copy only keeps stream order
};

// When a buffer copy call returns, relative to the move.
enum class Completion {
    queued,   // at once: the bytes move later in stream order (DMA, prefetch, a worker thread)
    may_wait, // the call may wait for part of the move on the calling thread (pageable staging)
};

// The facts of a buffer strategy, declared next to it.
struct BufferFacts {
    Views views;
    Movement movement;
    Completion completion;
};

// A strategy's facts fit together: copying needs two views; migrating and moving nothing need one.
constexpr bool consistent(BufferFacts f) noexcept {
    return (f.views == Views::separate) == (f.movement == Movement::copy);
}

// The XFER_CAP_* bits that follow from the facts:
//   SHARED_VIEW  one memory for both views
//   NO_COPY      nothing moves
//   MIGRATES     pages move
//   ASYNC_COPY   bytes move, and the call returns before they do
constexpr unsigned caps_of(BufferFacts f) noexcept {
    unsigned caps = 0;
    if (f.views == Views::shared) {
        caps |= XFER_CAP_SHARED_VIEW;
    }
    if (f.movement == Movement::none) {
        caps |= XFER_CAP_NO_COPY;
    }
    if (f.movement == Movement::migrate) {
        caps |= XFER_CAP_MIGRATES;
    }
    if (f.movement != Movement::none && f.completion == Completion::queued) {
        caps |= XFER_CAP_ASYNC_COPY;
    }
    return caps;
}

// A table with the ABI version and struct size this plugin was built with, its identity, the
// capabilities of `facts` and its declared parameters; every entry is NULL ("not supported")
// until the caller fills it in.
constexpr xfer_backend_table table_header(const char *name, const char *description, xfer_device_kind kind,
                                          BufferFacts facts, const xfer_backend_param *params,
                                          std::size_t param_count) noexcept {
    xfer_backend_table t{};
    t.abi_major = XFER_BACKEND_ABI_MAJOR;
    t.abi_minor = XFER_BACKEND_ABI_MINOR;
    t.struct_size = sizeof(xfer_backend_table);
    t.name = name;
    t.description = description;
    t.device_kind = kind;
    t.caps = caps_of(facts);
    t.params = params;
    t.param_count = param_count;
    return t;
}

} // namespace xfer::plugin

// Fills the entries of table `t` that the host and the CUDA tables both take from functions of
// the same name in the caller's namespace: the list of them is written here once. A macro
// because an entry's name is both a struct member and the function that fills it.
#define XFER_PLUGIN_SET_SHARED_ENTRIES(t)                                                                              \
    do {                                                                                                               \
        (t).context_destroy = context_destroy;                                                                         \
        (t).stream_create = stream_create;                                                                             \
        (t).stream_destroy = stream_destroy;                                                                           \
        (t).stream_synchronize = stream_synchronize;                                                                   \
        (t).device_info = device_info;                                                                                 \
        (t).memcpy_async = memcpy_async;                                                                               \
        (t).memcpy_batch_async = memcpy_batch_async;                                                                   \
        (t).stream_query = stream_query;                                                                               \
        (t).stream_wait_event = stream_wait_event;                                                                     \
        (t).stream_launch_host_func = stream_launch_host_func;                                                         \
        (t).stream_native = stream_native;                                                                             \
        (t).event_create = event_create;                                                                               \
        (t).event_destroy = event_destroy;                                                                             \
        (t).event_record = event_record;                                                                               \
        (t).event_synchronize = event_synchronize;                                                                     \
        (t).event_query = event_query;                                                                                 \
        (t).event_elapsed_ms = event_elapsed_ms;                                                                       \
        (t).event_native = event_native;                                                                               \
        (t).register_memory = register_memory;                                                                         \
        (t).unregister_memory = unregister_memory;                                                                     \
        (t).registration_stats = registration_stats;                                                                   \
        (t).device_can_access_peer = device_can_access_peer;                                                           \
        (t).memcpy_peer_async = memcpy_peer_async;                                                                     \
        (t).buffer_copy_peer_async = buffer_copy_peer_async;                                                           \
    } while (0)

// SPDX-License-Identifier: Apache-2.0
// The host backend's plugin table: each entry checks nothing the core already validated
// (see xfer_backend.h), does its work through the classes of this folder, and turns every
// exception into a status through guarded().

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "host_buffer.hpp"
#include "host_context.hpp"
#include "host_event.hpp"
#include "host_stream.hpp"
#include <xfer/xfer_backend.h>
#include <xfer_plugin/errors.hpp>
#include <xfer_plugin/paths.hpp>
#include <xfer_plugin/shared_memory.hpp>
#include <xfer_plugin/table.hpp>

namespace xfer::host {
namespace {

using plugin::guarded;

// Every copy of this backend is a memcpy on a stream's worker thread (the emulated device lives
// in host memory): one path for every piece, reported before the copy is queued.
xfer_status take_memcpy(std::uint64_t copies, std::uint64_t bytes, std::uint64_t largest) {
    return plugin::take_path(XFER_PATH_HOST_MEMCPY, XFER_REASON_MEMORY, copies, bytes, largest);
}

HostContext *as_context(void *p) { return static_cast<HostContext *>(p); }
HostBuffer *as_buffer(void *p) { return static_cast<HostBuffer *>(p); }
HostStream *as_stream(void *p) { return static_cast<HostStream *>(p); }
HostEvent *as_event(void *p) { return static_cast<HostEvent *>(p); }

// ------------------------------------------------------------------------- contexts

xfer_status probe(int *device_count) {
    // A core without probe_params: the emulated devices are always there, as many as the
    // `devices` parameter declares by default (probe_params counts the configured value).
    return guarded("host probe", [&] { return count_devices(nullptr, 0, device_count); });
}

xfer_status context_create(int device, const xfer_backend_param_value *params, size_t param_count, void **ctx) {
    return guarded("host context_create", [&] {
        HostContext *created = nullptr;
        const xfer_status st = create_context(device, params, param_count, &created);
        if (st == XFER_SUCCESS) {
            *ctx = created;
        }
        return st;
    });
}

xfer_status context_destroy(void *ctx) {
    delete as_context(ctx);
    return XFER_SUCCESS;
}

xfer_status device_info(void *ctx, xfer_device_info *info) {
    fill_device_info(*as_context(ctx), info);
    return XFER_SUCCESS;
}

// -------------------------------------------------------------------------- buffers

// Hands a storage to the core as a buffer and its two views.
xfer_status hand_out(std::shared_ptr<HostStorage> storage, void **buf, void **host_view, void **device_view) {
    auto buffer = std::make_unique<HostBuffer>();
    buffer->storage = std::move(storage);
    *host_view = buffer->storage->host_view();
    *device_view = buffer->storage->device_view();
    *buf = buffer.release();
    return XFER_SUCCESS;
}

xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view, void **device_view) {
    return guarded("host buffer_alloc", [&] {
        // Placement hints mean nothing here; XFER_ALLOC_SHAREABLE puts both views in a memfd.
        const bool shareable = (flags & XFER_ALLOC_SHAREABLE) != 0;
        std::shared_ptr<HostStorage> storage;
        HostContext &c = *as_context(ctx);
        const xfer_status st = shareable ? HostStorage::create_shared(c.account, c.views, bytes, &storage)
                                         : HostStorage::create(c.account, c.views, bytes, &storage);
        if (st != XFER_SUCCESS) {
            return st;
        }
        return hand_out(std::move(storage), buf, host_view, device_view);
    });
}

// An export's payload: the buffer's size and its layout in the memfd (host view, then the
// device view, each rounded up to pages).
struct SharedPayload {
    std::uint32_t layout = 1;
    std::uint32_t reserved = 0;
    std::uint64_t bytes = 0;
};

xfer_status buffer_export(void * /*ctx*/, void *buf, void *payload, size_t *payload_bytes, int *fds, size_t *fd_count) {
    return guarded("host buffer_export", [&] {
        const HostStorage &storage = *as_buffer(buf)->storage;
        if (storage.shared_fd() < 0) {
            return plugin::fail(XFER_ERROR_INVALID_STATE,
                                "host buffer_export: the buffer was allocated without XFER_ALLOC_SHAREABLE (its views "
                                "are private memory); allocate it with that flag to export it");
        }
        if (*payload_bytes < sizeof(SharedPayload) || *fd_count < 1) {
            return plugin::fail(XFER_ERROR_INTERNAL, "host buffer_export: no room for the description");
        }
        plugin::OwnedFd fd;
        if (xfer_status st = plugin::duplicate_fd(storage.shared_fd(), "host buffer_export", &fd)) {
            return st;
        }
        SharedPayload p;
        p.bytes = storage.size();
        std::memcpy(payload, &p, sizeof p);
        *payload_bytes = sizeof p;
        fds[0] = fd.release();
        *fd_count = 1;
        return XFER_SUCCESS;
    });
}

xfer_status buffer_import(void *ctx, const void *payload, size_t payload_bytes, const int *fds, size_t fd_count,
                          size_t bytes, void **buf, void **host_view, void **device_view) {
    return guarded("host buffer_import", [&] {
        SharedPayload p;
        if (payload_bytes != sizeof p) {
            return plugin::fail(XFER_ERROR_INVALID_ARGUMENT,
                                "host buffer_import: the export's description has %zu bytes (a host buffer's has %zu)",
                                payload_bytes, sizeof p);
        }
        std::memcpy(&p, payload, sizeof p);
        if (p.layout != 1 || p.bytes != bytes) {
            return plugin::fail(XFER_ERROR_INVALID_ARGUMENT,
                                "host buffer_import: the export describes layout %u of %llu bytes (layout 1 of %zu "
                                "expected)",
                                p.layout, static_cast<unsigned long long>(p.bytes), bytes);
        }
        if (fd_count != 1) {
            return plugin::fail(XFER_ERROR_INVALID_ARGUMENT,
                                "host buffer_import: a host buffer travels with 1 descriptor, not %zu", fd_count);
        }
        HostContext &c = *as_context(ctx);
        std::shared_ptr<HostStorage> storage;
        if (xfer_status st = HostStorage::import_shared(c.account, c.views, fds[0], bytes, &storage)) {
            return st;
        }
        return hand_out(std::move(storage), buf, host_view, device_view);
    });
}

// Both views are plain host memory, whichever way they were made.
xfer_status buffer_share_info(void * /*ctx*/, void *buf, xfer_share_info *info) {
    constexpr int kDLCPU = 1; // DLPack's DLDeviceType
    info->handle_types = as_buffer(buf)->storage->shared_fd() >= 0 ? XFER_SHARE_HANDLE_MEMFD : 0u;
    info->host_memory_kind = "system";
    info->device_memory_kind = "system";
    info->host_dlpack_device_type = kDLCPU;
    info->device_dlpack_device_type = kDLCPU;
    return XFER_SUCCESS;
}

xfer_status buffer_free(void * /*ctx*/, void *buf) {
    // Drops the handle's reference only; queued copies hold their own and the last one frees.
    delete as_buffer(buf);
    return XFER_SUCCESS;
}

xfer_status buffer_copy_async(void * /*ctx*/, void *buf, xfer_direction dir, size_t offset, size_t bytes,
                              void *stream) {
    return guarded("host buffer_copy_async", [&] {
        if (xfer_status st = take_memcpy(1, bytes, bytes)) return st;
        std::shared_ptr<HostStorage> storage = as_buffer(buf)->storage;
        as_stream(stream)->enqueue([storage, dir, offset, bytes] {
            unsigned char *host = storage->host_view() + offset;
            unsigned char *device = storage->device_view() + offset;
            if (dir == XFER_TO_DEVICE) {
                std::memcpy(device, host, bytes);
            } else {
                std::memcpy(host, device, bytes);
            }
        });
        return XFER_SUCCESS;
    });
}

// ---------------------------------------------------------------------- raw copies

// Every kind is a memcpy: the emulated device lives in host memory, so all pointers are host pointers.
// A queued raw copy holds the storage of every buffer view it reads or writes, so that
// xfer_free of that buffer defers the release until the copy has run (the rule of xfer.h).
using Holds = std::vector<std::shared_ptr<HostStorage>>;

void hold_view(const LiveViews &views, const void *p, Holds *holds) {
    if (std::shared_ptr<HostStorage> storage = views.find(p)) {
        holds->push_back(std::move(storage));
    }
}

void hold_views(const LiveViews &views, const void *dst, const void *src, Holds *holds) {
    hold_view(views, dst, holds);
    hold_view(views, src, holds);
}

xfer_status memcpy_async(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind /*kind*/, void *stream) {
    return guarded("host memcpy_async", [&] {
        if (xfer_status st = take_memcpy(1, bytes, bytes)) return st;
        Holds holds;
        hold_views(*as_context(ctx)->views, dst, src, &holds);
        as_stream(stream)->enqueue([dst, src, bytes, holds = std::move(holds)] { std::memcpy(dst, src, bytes); });
        return XFER_SUCCESS;
    });
}

xfer_status memcpy_batch_async(void *ctx, void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                               xfer_copy_kind /*kind*/, void *stream) {
    return guarded("host memcpy_batch_async", [&] {
        struct Copy {
            void *dst;
            const void *src;
            size_t bytes;
        };
        // The caller's arrays are only valid during this call: keep a copy for the worker.
        std::vector<Copy> copies;
        Holds holds;
        copies.reserve(count);
        std::uint64_t total = 0, largest = 0;
        for (size_t i = 0; i < count; ++i) {
            copies.push_back(Copy{dsts[i], srcs[i], sizes[i]});
            hold_views(*as_context(ctx)->views, dsts[i], srcs[i], &holds);
            total += sizes[i];
            largest = std::max<std::uint64_t>(largest, sizes[i]);
        }
        if (xfer_status st = take_memcpy(count, total, largest)) return st;
        // Many small copies of a batch usually touch a few buffers: one hold each is enough.
        std::sort(holds.begin(), holds.end());
        holds.erase(std::unique(holds.begin(), holds.end()), holds.end());
        as_stream(stream)->enqueue([copies = std::move(copies), holds = std::move(holds)] {
            for (const Copy &c : copies) {
                std::memcpy(c.dst, c.src, c.bytes);
            }
        });
        return XFER_SUCCESS;
    });
}

// ---------------------------------------------------------------- several devices

xfer_status probe_params(const xfer_backend_param_value *params, size_t param_count, int *device_count) {
    return guarded("host probe_params", [&] { return count_devices(params, param_count, device_count); });
}

xfer_status device_can_access_peer(void * /*ctx*/, void * /*peer*/, int *can_access) {
    *can_access = 1; // every emulated device is host RAM
    return XFER_SUCCESS;
}

xfer_status memcpy_peer_async(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes,
                              void * /*stream_ctx*/, void *stream) {
    return guarded("host memcpy_peer_async", [&] {
        if (xfer_status st = take_memcpy(1, bytes, bytes)) return st;
        // As memcpy_async: a buffer view of either device stays alive until the copy has run.
        Holds holds;
        hold_view(*as_context(dst_ctx)->views, dst, &holds);
        hold_view(*as_context(src_ctx)->views, src, &holds);
        as_stream(stream)->enqueue([dst, src, bytes, holds = std::move(holds)] { std::memcpy(dst, src, bytes); });
        return XFER_SUCCESS;
    });
}

xfer_status buffer_copy_peer_async(void * /*dst_ctx*/, void *dst_buf, size_t dst_offset, void * /*src_ctx*/,
                                   void *src_buf, size_t src_offset, size_t bytes, void * /*stream_ctx*/,
                                   void *stream) {
    return guarded("host buffer_copy_peer_async", [&] {
        if (xfer_status st = take_memcpy(1, bytes, bytes)) return st;
        // The task holds both storages: xfer_free of either buffer is deferred until it has run.
        std::shared_ptr<HostStorage> to = as_buffer(dst_buf)->storage;
        std::shared_ptr<HostStorage> from = as_buffer(src_buf)->storage;
        as_stream(stream)->enqueue([to, from, dst_offset, src_offset, bytes] {
            std::memcpy(to->device_view() + dst_offset, from->device_view() + src_offset, bytes);
        });
        return XFER_SUCCESS;
    });
}

// -------------------------------------------------------------------------- streams

xfer_status stream_create(void *ctx, void **stream) {
    return guarded("host stream_create (starting the stream's worker thread)", [&] {
        auto created = std::make_unique<HostStream>();
        as_context(ctx)->streams.add(created.get());
        *stream = created.release();
        return XFER_SUCCESS;
    });
}

// A host function must not call xfer (xfer.h); if it waits for its own stream anyway, it
// gets an error instead of a deadlock.
xfer_status refuse_on_own_worker(HostStream &s, const char *operation) {
    if (!s.is_worker_thread()) {
        return XFER_SUCCESS;
    }
    return plugin::fail(XFER_ERROR_INVALID_STATE,
                        "%s: called from a host function running on this stream, which would wait for itself "
                        "(host functions must not call xfer functions)",
                        operation);
}

xfer_status stream_destroy(void *ctx, void *stream) {
    HostStream *s = as_stream(stream);
    if (xfer_status st = refuse_on_own_worker(*s, "host stream_destroy"); st != XFER_SUCCESS) {
        return st;
    }
    // Failures of earlier host functions are reported, but the stream goes either way.
    const xfer_status st = guarded("host stream_destroy", [&] { return s->synchronize(); });
    as_context(ctx)->streams.remove(s);
    delete s;
    return st;
}

xfer_status stream_synchronize(void * /*ctx*/, void *stream) {
    return guarded("host stream_synchronize", [&] {
        HostStream *s = as_stream(stream);
        if (xfer_status st = refuse_on_own_worker(*s, "host stream_synchronize"); st != XFER_SUCCESS) {
            return st;
        }
        return s->synchronize();
    });
}

xfer_status stream_query(void * /*ctx*/, void *stream) {
    return guarded("host stream_query",
                   [&] { return as_stream(stream)->idle() ? XFER_SUCCESS : XFER_ERROR_NOT_READY; });
}

xfer_status stream_wait_event(void * /*ctx*/, void *stream, void *event) {
    return guarded("host stream_wait_event", [&] {
        std::shared_ptr<EventMarker> marker = as_event(event)->latest();
        if (!marker) {
            return XFER_SUCCESS; // never recorded: nothing to wait for (as in CUDA)
        }
        // Blocks only this stream's worker; the marker completes on the recording stream.
        as_stream(stream)->enqueue([marker] { marker->wait(); });
        return XFER_SUCCESS;
    });
}

xfer_status stream_launch_host_func(void * /*ctx*/, void *stream, xfer_host_fn fn, void *user_data) {
    return guarded("host stream_launch_host_func", [&] {
        as_stream(stream)->enqueue([fn, user_data] { fn(user_data); });
        return XFER_SUCCESS;
    });
}

void *stream_native(void * /*ctx*/, void *stream) {
    // No native object exists; the stream's own address identifies it uniquely while it lives.
    return stream;
}

// --------------------------------------------------------------------------- events

xfer_status event_create(void * /*ctx*/, unsigned /*flags: timing is always cheap here*/, void **event) {
    return guarded("host event_create", [&] {
        *event = new HostEvent();
        return XFER_SUCCESS;
    });
}

xfer_status event_destroy(void * /*ctx*/, void *event) {
    // Queued waits and records hold their markers, not the event, so they are unaffected.
    delete as_event(event);
    return XFER_SUCCESS;
}

xfer_status event_record(void * /*ctx*/, void *event, void *stream) {
    return guarded("host event_record", [&] {
        auto marker = std::make_shared<EventMarker>();
        as_stream(stream)->enqueue(nullptr, [marker] { marker->complete(); });
        as_event(event)->set_latest(std::move(marker));
        return XFER_SUCCESS;
    });
}

xfer_status event_synchronize(void * /*ctx*/, void *event) {
    return guarded("host event_synchronize", [&] {
        if (std::shared_ptr<EventMarker> marker = as_event(event)->latest()) {
            marker->wait();
        }
        return XFER_SUCCESS;
    });
}

xfer_status event_query(void * /*ctx*/, void *event) {
    return guarded("host event_query", [&] {
        std::shared_ptr<EventMarker> marker = as_event(event)->latest();
        return !marker || marker->is_complete() ? XFER_SUCCESS : XFER_ERROR_NOT_READY;
    });
}

xfer_status event_elapsed_ms(void * /*ctx*/, void *start, void *end, float *ms) {
    return guarded("host event_elapsed_ms", [&] {
        std::shared_ptr<EventMarker> first = as_event(start)->latest();
        std::shared_ptr<EventMarker> last = as_event(end)->latest();
        if (!first || !last) {
            // The core checks this first; kept so the backend is correct on its own too.
            return plugin::fail(XFER_ERROR_INVALID_STATE, "host event_elapsed_ms: an event was never recorded");
        }
        if (!first->is_complete() || !last->is_complete()) {
            return XFER_ERROR_NOT_READY;
        }
        // May be negative when `end` completed first, as with cudaEventElapsedTime.
        const std::chrono::duration<float, std::milli> elapsed = last->completion_time() - first->completion_time();
        *ms = elapsed.count();
        return XFER_SUCCESS;
    });
}

void *event_native(void * /*ctx*/, void *event) {
    // No native object exists; the event's own address identifies it uniquely while it lives.
    return event;
}

// ------------------------------------------------------------- registered memory

xfer_status register_memory(void *ctx, void *ptr, size_t bytes, unsigned /*flags: nothing to map*/) {
    return guarded("host register_memory", [&] { return as_context(ctx)->registered.add(ptr, bytes); });
}

xfer_status unregister_memory(void *ctx, void *ptr) {
    return guarded("host unregister_memory", [&] {
        HostContext &c = *as_context(ctx);
        // Queued copies may still read or write the range (xfer.h): they run first, as
        // cudaDeviceSynchronize makes them on the CUDA backends, so the caller may free it after.
        if (xfer_status st = c.registered.check_start(ptr); st != XFER_SUCCESS) {
            return st;
        }
        if (xfer_status st = c.streams.drain("host unregister_memory"); st != XFER_SUCCESS) {
            return st;
        }
        return c.registered.remove(ptr);
    });
}

xfer_status registration_stats(void *ctx, xfer_registration_stats *stats) {
    return guarded("host registration_stats", [&] {
        as_context(ctx)->registered.stats(stats);
        return XFER_SUCCESS;
    });
}

xfer_backend_table make_table() {
    xfer_backend_table t = plugin::table_header(
        "host",
        "GPU-less emulated device: device memory is a separate host allocation; copies run on per-stream worker "
        "threads",
        XFER_DEVICE_KIND_HOST, kBufferFacts, kParams, kParamCount);
    t.probe = probe;
    t.context_create = context_create;
    t.buffer_alloc = buffer_alloc;
    t.buffer_free = buffer_free;
    t.buffer_export = buffer_export;
    t.buffer_import = buffer_import;
    t.buffer_share_info = buffer_share_info;
    t.buffer_copy_async = buffer_copy_async;
    t.probe_params = probe_params;
    XFER_PLUGIN_SET_SHARED_ENTRIES(t);
    return t;
}

const xfer_backend_table kTable = make_table();

} // namespace
} // namespace xfer::host

extern "C" XFER_BACKEND_EXPORT const xfer_backend_table *xfer_backend_entry(const xfer_core_services *core) {
    xfer::plugin::set_core_services(core);
    return &xfer::host::kTable;
}

// SPDX-License-Identifier: Apache-2.0
// The plugin table of a CUDA backend (backend.hpp): the entries that depend on the backend's
// description, and the table they and the shared entries (entries.hpp) fill.
#include <memory>
#include <string>
#include <vector>

#include "batch.hpp"
#include "entries.hpp"
#include "host_pool.hpp"
#include "known_memory.hpp"
#include "shareable.hpp"
#include "user_memory/registration_cache.hpp"
#include "user_memory/setup.hpp"
#include "xfer_cuda/backend.hpp"
#include <xfer_plugin/paths.hpp>
#include <xfer_plugin/table.hpp>

namespace xfer::cuda {

// ------------------------------------------------------------------------- contexts

xfer_status probe_entry(const BackendDescription &d, int *device_count) noexcept {
    return guarded("probe", [&] {
        CallerBinding binding;
        binding.note_replaced(); // the runtime's first call may bind a context implicitly: undone
        return binding.restore(probe_devices(d.requirement, device_count));
    });
}

xfer_status context_create_entry(const BackendDescription &d, int device, const xfer_backend_param_value *params,
                                 std::size_t param_count, void **ctx) noexcept {
    return guarded("context_create", [&] {
        std::unique_ptr<Context> c;
        if (d.make_context == nullptr) {
            c = std::make_unique<Context>();
        } else if (auto st = d.make_context(params, param_count, &c)) {
            // Parameters come first: a bad configuration is reported without touching the device.
            return st;
        }
        user_memory::CommonParams common;
        if (auto st = user_memory::read_common_params(d.name, d.stages, params, param_count, &common)) {
            return st;
        }
        c->host_threads = common.host_threads;
        c->host_pool = std::make_unique<HostPool>(common.host_threads);
        if (auto st = read_batch_params(d.name, params, param_count, common.host_threads, *c)) {
            return st;
        }
        if (auto st = open_device(device, d.requirement, *c)) {
            return st;
        }
        // The calibration (kept, or measured now on this GPU's first open) and what follows from it.
        CallerBinding binding;
        xfer_status st = activate(*c, binding);
        if (st == XFER_SUCCESS) {
            st = user_memory::open_user_memory(*c, d.stages, d.user_memory, common);
        }
        st = binding.restore(st);
        if (st != XFER_SUCCESS) {
            (void)close_context(std::move(c));
            return st;
        }
        *ctx = c.release();
        return XFER_SUCCESS;
    });
}

xfer_status read_host_threads(const char *backend, const xfer_backend_param_value *values, std::size_t count,
                              std::size_t *threads) noexcept {
    user_memory::CommonParams common;
    if (auto st = user_memory::read_common_params(backend, true, values, count, &common)) return st;
    *threads = common.host_threads;
    return XFER_SUCCESS;
}

xfer_status context_derived_value_entry(const std::vector<xfer_backend_param> &derived, void *ctx, std::size_t index,
                                        const char **value, int *calibrated) noexcept {
    return guarded("context_derived_value", [&] {
        thread_local std::string t_value;
        const Context &c = as_context(ctx);
        if (index >= derived.size()) {
            return fail(XFER_ERROR_INVALID_ARGUMENT, "context_derived_value: index %zu of %zu", index, derived.size());
        }
        const auto it = c.derived_values.find(derived[index].name);
        // A value the context never derived (the backend takes it as declared): its default.
        t_value = it != c.derived_values.end() ? it->second.value : derived[index].default_value;
        *value = t_value.c_str();
        *calibrated = it != c.derived_values.end() && it->second.calibrated ? 1 : 0;
        return XFER_SUCCESS;
    });
}

xfer_status context_calibrate_entry(void *ctx, unsigned flags, xfer_calibration_info *info) noexcept {
    return on_device("context_calibrate", ctx, [&](const Context &c) {
        return user_memory::calibrate(c, (flags & XFER_CALIBRATE_FORCE) != 0u, info);
    });
}

namespace {
xfer_status context_destroy(void *ctx) {
    return guarded("context_destroy", [&] { return close_context(std::unique_ptr<Context>(&as_context(ctx))); });
}
} // namespace

// -------------------------------------------------------------------------- buffers

namespace {

// Lists both views with the driver's answer of what each is, and hands them to the core.
xfer_status hand_out(std::unique_ptr<Buffer> b, void **buf, void **host_view, void **device_view) {
    // Each view classified once, by the driver, so that copies between them need not ask.
    b->host_memory = classify(b->host);
    b->device_memory = b->device != b->host ? classify(b->device) : b->host_memory;
    known_memory::add(b->host, b->bytes, b->host_memory);
    if (b->device != b->host) {
        known_memory::add(b->device, b->bytes, b->device_memory);
    }
    *host_view = b->host;
    *device_view = b->device;
    *buf = b.release();
    return XFER_SUCCESS;
}

// Releases a buffer's views, the strategy's own or the shareable ones.
xfer_status release_views(const BufferStrategy &s, const Context &c, Buffer &b) {
    return b.shared != nullptr ? shareable::release(b) : s.release(c, b);
}

} // namespace

xfer_status buffer_alloc_entry(const BufferStrategy &s, HostSharing sharing, void *ctx, std::size_t bytes,
                               unsigned flags, void **buf, void **host_view, void **device_view) noexcept {
    return on_device("buffer_alloc", ctx, [&](const Context &c) {
        // The record exists before any memory does, so a failure to make it leaks nothing; the
        // strategy leaves nothing allocated when it fails.
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        // The core refuses XFER_ALLOC_SHAREABLE for a backend without sharing (no export entry).
        const bool shareable = (flags & XFER_ALLOC_SHAREABLE) != 0 && sharing != HostSharing::none;
        if (auto st = shareable ? shareable::allocate(c, sharing, *b) : s.allocate(c, flags, *b)) {
            return st;
        }
        return hand_out(std::move(b), buf, host_view, device_view);
    });
}

xfer_status buffer_import_entry(HostSharing sharing, void *ctx, const void *payload, std::size_t payload_bytes,
                                const int *fds, std::size_t fd_count, std::size_t bytes, void **buf, void **host_view,
                                void **device_view) noexcept {
    return on_device("buffer_import", ctx, [&](const Context &c) {
        auto b = std::make_unique<Buffer>();
        b->bytes = bytes;
        if (auto st = shareable::import_views(c, sharing, payload, payload_bytes, fds, fd_count, *b)) {
            return st;
        }
        return hand_out(std::move(b), buf, host_view, device_view);
    });
}

xfer_status buffer_export_entry(void * /*ctx*/, void *buf, void *payload, size_t *payload_bytes, int *fds,
                                size_t *fd_count) noexcept {
    return guarded("buffer_export",
                   [&] { return shareable::export_views(as_buffer(buf), payload, payload_bytes, fds, fd_count); });
}

namespace {
xfer_status buffer_share_info(void *ctx, void *buf, xfer_share_info *info) {
    shareable::describe(as_context(ctx), as_buffer(buf), *info);
    return XFER_SUCCESS;
}
} // namespace

xfer_status buffer_free_entry(const BufferStrategy &s, void *ctx, void *buf) noexcept {
    return guarded("buffer_free", [&] {
        const Context &c = as_context(ctx);
        // Owned before anything can fail: the core forgets the handle whatever this returns.
        std::unique_ptr<Buffer> b(&as_buffer(buf));
        // Forgotten before the memory goes, so that no lookup answers for a reused address.
        known_memory::remove(b->host);
        known_memory::remove(b->device);
        CallerBinding binding;
        if (auto st = activate(c, binding)) {
            if (b->shared != nullptr) (void)shareable::release(*b); // the record goes: so do its views
            return binding.restore(st);
        }
        const xfer_status waited = wait_for_queued_work(c);
        // What the registration cache page-locked of the host view goes before the memory does
        // (the pageable backend's views are user memory to its copy policy).
        const xfer_status unlocked =
            c.cache->holds_any(b->host, b->bytes) ? c.cache->forget(b->host, b->bytes) : XFER_SUCCESS;
        return binding.restore(last_failure(last_failure(waited, unlocked), release_views(s, c, *b)));
    });
}

xfer_status buffer_copy_entry(const BufferStrategy &s, void *ctx, void *buf, xfer_direction dir, std::size_t offset,
                              std::size_t bytes, void *stream) noexcept {
    // Through on_device even with nothing to queue: a device that a sticky fault made unusable
    // refuses every call (XFER_ERROR_BACKEND_UNAVAILABLE), the no-op copy of one memory included.
    return on_device("buffer_copy_async", ctx, [&](const Context &c) {
        if (s.copy_async == nullptr) {
            // One memory, nothing to queue (see BufferStrategy::copy_async): the device reads it
            // over the bus when it uses it.
            return plugin::take_path(XFER_PATH_MAPPED, XFER_REASON_MEMORY, bytes);
        }
        return s.copy_async(c, as_buffer(buf), dir, offset, bytes, static_cast<cudaStream_t>(stream));
    });
}

// ---------------------------------------------------------------------------- table

std::vector<xfer_backend_param> with_common_params(const BackendDescription &d) {
    std::vector<xfer_backend_param> all(d.params, d.params + d.param_count);
    all.insert(all.end(), user_memory::kCommonParams, user_memory::kCommonParams + user_memory::kCommonParamCount);
    return all;
}

std::vector<xfer_backend_param> with_common_derived(const BackendDescription &d) {
    std::vector<xfer_backend_param> all(d.derived, d.derived + d.derived_count);
    if (d.stages) {
        all.insert(all.end(), user_memory::kStagedDerived,
                   user_memory::kStagedDerived + user_memory::kStagedDerivedCount);
    }
    all.insert(all.end(), user_memory::kCommonDerived, user_memory::kCommonDerived + user_memory::kCommonDerivedCount);
    all.insert(all.end(), kBatchDerived, kBatchDerived + kBatchDerivedCount);
    return all;
}

xfer_backend_table describe(const BackendDescription &d) noexcept {
    xfer_backend_table t =
        plugin::table_header(d.name, d.description, XFER_DEVICE_KIND_CUDA, d.buffers.facts, d.params, d.param_count);
    XFER_PLUGIN_SET_SHARED_ENTRIES(t);
    t.stream_wrap = stream_wrap;
    t.stream_unwrap = stream_unwrap;
    t.buffer_share_info = buffer_share_info;
    return t;
}

} // namespace xfer::cuda

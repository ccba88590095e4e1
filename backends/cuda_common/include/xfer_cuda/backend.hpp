// SPDX-License-Identifier: Apache-2.0
// A CUDA backend described as data: what sets it apart from the other CUDA backends (its
// buffer strategy, what it needs of a device, its parameters and context). Its plugin entry
// point is then one line, `return plugin_table<its description>(core);`, and this library
// supplies every entry of the table (src/plugin_table.cpp).
//
// Parameters are read with param_u64 / param_text / param_choice (xfer_plugin/params.hpp,
// re-exported here): a parameter that is not set takes its declared default text, parsed like
// any value, so no default is written twice. A derived value is read the same way from the
// backend's `derived` declarations: set only where the user set it.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "buffer.hpp"
#include "context.hpp"
#include <xfer/xfer_backend.h>
#include <xfer_plugin/params.hpp>

namespace xfer::cuda {

using plugin::param_choice;
using plugin::param_text;
using plugin::param_u64;

// Makes a backend's own context (a type derived from Context) and reads its parameters into it.
using ContextFactory = xfer_status (*)(const xfer_backend_param_value *values, std::size_t count,
                                       std::unique_ptr<Context> *out);

struct BackendDescription {
    const char *name;
    const char *description;
    Requirement requirement;       // what each device it opens must support beyond being a CUDA device
    const BufferStrategy &buffers; // the table's caps are caps_of(buffers)
    const xfer_backend_param *params = nullptr;
    std::size_t param_count = 0;
    ContextFactory make_context = nullptr; // nullptr: a plain Context; the backend takes no parameters
    // XFER_ALLOC_SHAREABLE: the device view is a CUDA virtual-memory allocation, the host view
    // a memfd kept this way (src/shareable.cpp); none: the backend cannot export.
    HostSharing host_sharing = HostSharing::none;
    // Values the backend derives itself (its engine's sizes, ...), declared as parameters are;
    // a user may still set one. make_context finds the ones set among its values.
    const xfer_backend_param *derived = nullptr;
    std::size_t derived_count = 0;
    // Copies of user memory while no calibration is known (UserMemoryRule, context.hpp).
    UserMemoryRule user_memory = UserMemoryRule::unregistered;
    // Its context has a staging engine (Context::host_copy_hook): the staged crossovers are
    // derived for it and `path` may be `staged`.
    bool stages = false;
};

// The most host threads xfer may start for copies (the common parameter host_threads, resolved:
// 0 = one per hardware thread but one). CONFIG when out of range.
xfer_status read_host_threads(const char *backend, const xfer_backend_param_value *values, std::size_t count,
                              std::size_t *threads) noexcept;

// The bodies of the entries that depend on the description. Each runs inside a fence:
// nothing throws across the ABI.
xfer_status probe_entry(const BackendDescription &d, int *device_count) noexcept;
xfer_status context_create_entry(const BackendDescription &d, int device, const xfer_backend_param_value *params,
                                 std::size_t param_count, void **ctx) noexcept;
xfer_status buffer_alloc_entry(const BufferStrategy &s, HostSharing sharing, void *ctx, std::size_t bytes,
                               unsigned flags, void **buf, void **host_view, void **device_view) noexcept;
xfer_status buffer_import_entry(HostSharing sharing, void *ctx, const void *payload, std::size_t payload_bytes,
                                const int *fds, std::size_t fd_count, std::size_t bytes, void **buf, void **host_view,
                                void **device_view) noexcept;
xfer_status buffer_free_entry(const BufferStrategy &s, void *ctx, void *buf) noexcept;
xfer_status buffer_export_entry(void *ctx, void *buf, void *payload, size_t *payload_bytes, int *fds,
                                size_t *fd_count) noexcept;
xfer_status buffer_copy_entry(const BufferStrategy &s, void *ctx, void *buf, xfer_direction dir, std::size_t offset,
                              std::size_t bytes, void *stream) noexcept;

// The backend's own parameters followed by those every CUDA backend declares (path, pin_limit,
// host_threads); its own derived values followed by those every one derives (the staged
// crossovers where it stages, registration_min, the batch values of packed small copies).
std::vector<xfer_backend_param> with_common_params(const BackendDescription &d);
std::vector<xfer_backend_param> with_common_derived(const BackendDescription &d);

xfer_status context_derived_value_entry(const std::vector<xfer_backend_param> &derived, void *ctx, std::size_t index,
                                        const char **value, int *calibrated) noexcept;
xfer_status context_calibrate_entry(void *ctx, unsigned flags, xfer_calibration_info *info) noexcept;

// A table with the description's name, description, parameters and the capabilities of its
// buffer strategy, and every entry that is the same for all CUDA backends; plugin_table adds
// the five above.
xfer_backend_table describe(const BackendDescription &d) noexcept;

namespace detail {
// The plugin ABI hands probe, context_create and the buffer entries no user data, so each
// backend needs functions of its own that know its description: one instantiation each.
template <const BackendDescription &D>
struct Entries {
    static xfer_status probe(int *device_count) { return probe_entry(D, device_count); }
    static xfer_status context_create(int device, const xfer_backend_param_value *params, size_t param_count,
                                      void **ctx) {
        return context_create_entry(D, device, params, param_count, ctx);
    }
    static xfer_status buffer_alloc(void *ctx, size_t bytes, unsigned flags, void **buf, void **host_view,
                                    void **device_view) {
        return buffer_alloc_entry(D.buffers, D.host_sharing, ctx, bytes, flags, buf, host_view, device_view);
    }
    static xfer_status buffer_import(void *ctx, const void *payload, size_t payload_bytes, const int *fds,
                                     size_t fd_count, size_t bytes, void **buf, void **host_view, void **device_view) {
        return buffer_import_entry(D.host_sharing, ctx, payload, payload_bytes, fds, fd_count, bytes, buf, host_view,
                                   device_view);
    }
    static xfer_status buffer_free(void *ctx, void *buf) { return buffer_free_entry(D.buffers, ctx, buf); }
    static const std::vector<xfer_backend_param> &derived() {
        static const std::vector<xfer_backend_param> all = with_common_derived(D);
        return all;
    }
    static xfer_status derived_value(void *ctx, size_t index, const char **value, int *calibrated) {
        return context_derived_value_entry(derived(), ctx, index, value, calibrated);
    }
    static xfer_status buffer_copy_async(void *ctx, void *buf, xfer_direction dir, size_t offset, size_t bytes,
                                         void *stream) {
        return buffer_copy_entry(D.buffers, ctx, buf, dir, offset, bytes, stream);
    }
};
} // namespace detail

// The body of a CUDA plugin's xfer_backend_entry: remembers the core's services and returns the
// table of the backend `D` describes, built once (the core keeps the pointer for the life of
// the process, and every call returns the same table).
template <const BackendDescription &D>
const xfer_backend_table *plugin_table(const xfer_core_services *core) noexcept {
    set_core_services(core);
    static const xfer_backend_table table = [] {
        using E = detail::Entries<D>;
        xfer_backend_table t = describe(D);
        t.probe = E::probe;
        t.context_create = E::context_create;
        t.buffer_alloc = E::buffer_alloc;
        t.buffer_free = E::buffer_free;
        t.buffer_copy_async = E::buffer_copy_async;
        if (D.host_sharing != HostSharing::none) {
            t.buffer_export = buffer_export_entry;
            t.buffer_import = E::buffer_import;
        }
        static const std::vector<xfer_backend_param> params = with_common_params(D);
        t.params = params.data();
        t.param_count = params.size();
        t.derived = E::derived().data();
        t.derived_count = E::derived().size();
        t.context_derived_value = E::derived_value;
        t.context_calibrate = context_calibrate_entry;
        return t;
    }();
    return &table;
}

} // namespace xfer::cuda

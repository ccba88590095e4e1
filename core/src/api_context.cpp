// SPDX-License-Identifier: Apache-2.0
// xfer_open, xfer_close and the context queries.
#include <cstring>
#include <string>
#include <vector>

#include "calibration_scope.hpp"
#include "config.hpp"
#include "error.hpp"
#include "fork_generation.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

namespace xfer::core {
namespace {

// The order xfer_open(NULL, ...) tries when nothing names a backend: the fastest strategy
// that usually works first, the host emulation last.
const char *const kPreferredBackends[] = {"pinned", "pageable", "managed", "zerocopy", "host"};

std::string found_names(const Discovery &d) {
    const std::string names = d.names();
    return names.empty() ? "none" : names;
}

const FoundBackend &require_backend(const Discovery &d, const std::string &name) {
    const FoundBackend *b = d.find(name);
    if (b == nullptr) {
        raise(XFER_ERROR_BACKEND_NOT_FOUND, "xfer_open: no backend named '", name,
              "' was found (searched: ", d.describe_dirs(), "; found: ", found_names(d), ")");
    }
    if (!b->available) raise(b->status, "xfer_open: backend '", name, "' is unavailable: ", b->reason);
    return *b;
}

const FoundBackend &choose_backend(const EffectiveConfig &cfg, const char *requested) {
    if (requested != nullptr) {
        if (*requested == '\0')
            raise(XFER_ERROR_INVALID_ARGUMENT,
                  "xfer_open: backend is an empty string (pass NULL to use the configured one)");
        return require_backend(cfg.discovery, requested);
    }
    if (!cfg.backend.empty()) return require_backend(cfg.discovery, cfg.backend);
    std::string reasons;
    for (const char *name : kPreferredBackends) {
        const FoundBackend *b = cfg.discovery.find(name);
        if (b == nullptr) continue;
        if (b->available) return *b;
        reasons += msg("; ", name, ": ", b->reason);
    }
    if (reasons.empty()) {
        raise(XFER_ERROR_BACKEND_NOT_FOUND,
              "xfer_open: no backend was named (XFER_BACKEND, config key 'backend') and none of "
              "pinned, pageable, managed, zerocopy, host was found (searched: ",
              cfg.discovery.describe_dirs(), ")");
    }
    raise(XFER_ERROR_BACKEND_UNAVAILABLE,
          "xfer_open: no backend was named (XFER_BACKEND, config key 'backend') and none of "
          "pinned, pageable, managed, zerocopy, host is available",
          reasons);
}

// Records the first failure while releasing and carries on: close must release everything.
struct FirstFailure {
    xfer_status status = XFER_SUCCESS;
    std::string message;
    template <class Call>
    void run(Call &&call) {
        try {
            call();
        } catch (const Error &e) {
            record(e.status(), e.what());
        } catch (const std::exception &e) {
            record(XFER_ERROR_INTERNAL, std::string("xfer_close: internal error: ") + e.what());
        }
    }
    void record(xfer_status st, const std::string &text) {
        if (status != XFER_SUCCESS) return;
        status = st;
        message = text;
    }
};

} // namespace
} // namespace xfer::core

using namespace xfer::core;

extern "C" {

XFER_API xfer_status xfer_open(const char *backend, int device, xfer_context *ctx) {
    return guard("xfer_open", [&] {
        if (ctx == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_open: ctx is NULL");
        if (device < -1) {
            raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_open: device ", device,
                  " is invalid (use an index >= 0, or -1 for the configured device)");
        }
        const EffectiveConfig cfg = load_effective_config(backend);
        const FoundBackend &chosen = choose_backend(cfg, backend);
        const Plugin &plugin = *chosen.plugin;
        const int index = device >= 0 ? device : cfg.device.value_or(0);
        if (index >= chosen.device_count) {
            raise(XFER_ERROR_NO_DEVICE, "xfer_open: device ", index, " requested but backend '", plugin.name, "' has ",
                  chosen.device_count, " device(s)");
        }
        const auto params = cfg.backend_params(plugin.name);
        std::vector<xfer_backend_param_value> values;
        for (const auto &[name, value] : params) values.push_back({name.c_str(), value.c_str()});

        auto record = std::make_shared<Context>();
        record->plugin = &plugin;
        record->device = index;
        record->fork_generation = fork_generation();
        record->stats.slow_path.store(cfg.slow_path == "refuse" ? XFER_SLOW_PATH_REFUSE
                                      : cfg.slow_path == "warn" ? XFER_SLOW_PATH_WARN
                                                                : XFER_SLOW_PATH_ALLOW);
        record->stats.configure_log(cfg.log_file, msg(plugin.name, ":", index));
        if (cfg.log_copies) record->stats.observe_with_log();
        if (cfg.slow_path == "warn") record->stats.ensure_log();
        record->params = cfg.backend_settings(plugin.name);
        record->derived = cfg.backend_derived(plugin.name);
        const CalibrationScope calibration(cfg.calibration);
        call_backend(plugin, "xfer_open", "context_create",
                     [&] { return plugin.table.context_create(index, values.data(), values.size(), &record->native); });
        *ctx = reinterpret_cast<xfer_context>(adopt(record, "xfer_open"));
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_close(xfer_context ctx) {
    return guard("xfer_close", [&] {
        refuse_in_host_function("xfer_close");
        lookup<Context>(ctx, "xfer_close", "ctx"); // an inherited context stays untouched (fork)
        LookupError why = LookupError::none;
        auto context = context_table().take(reinterpret_cast<std::uintptr_t>(ctx), &why);
        if (!context) raise_bad_handle("xfer_close", "ctx", ctx, HandleKind::context, why);

        // Waits for calls in flight on this context and its objects to finish; none enters after.
        context->lifetime.close();
        context->closed = true;
        std::unordered_set<std::uint64_t> buffers, streams, events;
        {
            std::lock_guard<std::mutex> children(context->children_mutex);
            buffers.swap(context->buffers);
            streams.swap(context->streams);
            events.swap(context->events);
        }
        const xfer_backend_table &t = context->table();
        const Plugin &plugin = *context->plugin;
        void *native = context->native;
        FirstFailure failure;
        const auto run = [&](auto &&step) { failure.run(step); };
        // Streams first: destroying one waits for its queued work, which may still use
        // buffers and events released below. Nothing native is touched before this: a
        // xfer_memcpy_async holding only its stream's gate may still be inside the backend
        // until retire_all closes that gate (objects.hpp).
        retire_all<Stream>(*context, streams, run);
        if (context->internal_stream != nullptr) {
            failure.run([&] {
                call_backend(plugin, "xfer_close", "stream_destroy",
                             [&] { return t.stream_destroy(native, context->internal_stream); });
            });
            context->internal_stream = nullptr;
        }
        retire_all<Event>(*context, events, run);
        retire_all<Buffer>(*context, buffers, run);
        failure.run([&] {
            call_backend(plugin, "xfer_close", ObjectKind<Context>::destroy_entry,
                         [&] { return ObjectKind<Context>::destroy(*context); });
        });
        if (failure.status != XFER_SUCCESS) throw Error(failure.status, failure.message);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_get_info(xfer_context ctx, xfer_context_info *info) {
    return guard("xfer_context_get_info", [&] {
        auto context = lookup<Context>(ctx, "xfer_context_get_info", "ctx");
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_context_get_info: info is NULL");
        info->backend = context->plugin->name.c_str(); // the plugin record lives for the process
        info->device = context->device;
        info->device_kind = context->table().device_kind;
        info->caps = context->table().caps;
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_device_get_info(xfer_context ctx, xfer_device_info *info) {
    return guard("xfer_device_get_info", [&] {
        auto context = lookup<Context>(ctx, "xfer_device_get_info", "ctx");
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_device_get_info: info is NULL");
        ContextUse use(*context, "xfer_device_get_info");
        const xfer_backend_table &t = context->table();
        if (t.device_info == nullptr) raise_not_supported(*context, "xfer_device_get_info");
        // Filled into a local first: output arguments are written only on success.
        xfer_device_info local;
        std::memset(&local, 0, sizeof local);
        local.ordinal = context->device;
        local.kind = t.device_kind;
        call_backend(*context->plugin, "xfer_device_get_info", "device_info",
                     [&] { return t.device_info(context->native, &local); });
        *info = local;
        return XFER_SUCCESS;
    });
}

} // extern "C"

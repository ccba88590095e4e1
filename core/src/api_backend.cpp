// SPDX-License-Identifier: Apache-2.0
// Enumeration of backends and configuration parameters.
#include <vector>

#include "config.hpp"
#include "error.hpp"
#include "thread_lasting.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

// Each thread's last enumeration: *_get_info(index) reads it, so indices stay consistent
// with the count this thread was given even while other threads enumerate. Usable from exit
// handlers too (thread_lasting.hpp).
struct Enumeration {
    std::vector<FoundBackend> backends;
    bool have_backends = false;
    std::vector<Setting> settings;
    bool have_settings = false;
    void release() noexcept { *this = Enumeration(); }
};
struct EnumerationTag;
Enumeration &this_thread() noexcept { return ThreadLasting<Enumeration, EnumerationTag>::get(); }

void enumerate_backends() {
    Enumeration &e = this_thread();
    e.backends = load_effective_config(nullptr, Opening::every).discovery.backends;
    e.have_backends = true;
}

void enumerate_settings() {
    Enumeration &e = this_thread();
    e.settings = load_effective_config(nullptr, Opening::every).settings;
    e.have_settings = true;
}

void check_index(const char *function, int index, std::size_t count) {
    if (index < 0 || static_cast<std::size_t>(index) >= count) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": index ", index, " is out of range (", count, " entries)");
    }
}

} // namespace

extern "C" {

XFER_API xfer_status xfer_backend_count(int *count) {
    return guard("xfer_backend_count", [&] {
        if (count == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_backend_count: count is NULL");
        enumerate_backends();
        *count = static_cast<int>(this_thread().backends.size());
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_backend_get_info(int index, xfer_backend_info *info) {
    return guard("xfer_backend_get_info", [&] {
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_backend_get_info: info is NULL");
        const Enumeration &e = this_thread();
        if (!e.have_backends) enumerate_backends();
        check_index("xfer_backend_get_info", index, e.backends.size());
        const FoundBackend &b = e.backends[static_cast<std::size_t>(index)];
        const Plugin &p = *b.plugin; // lives for the process, as do the interned reasons
        info->name = p.name.c_str();
        info->description = p.description();
        info->path = p.path.c_str();
        info->available = b.available ? 1 : 0;
        info->reason = b.available ? "" : b.reason;
        info->device_count = b.available ? b.device_count : 0;
        info->device_kind = p.loaded() ? p.table.device_kind : XFER_DEVICE_KIND_HOST;
        info->abi_major = p.abi_major;
        info->abi_minor = p.abi_minor;
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_param_count(int *count) {
    return guard("xfer_param_count", [&] {
        if (count == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_param_count: count is NULL");
        enumerate_settings();
        *count = static_cast<int>(this_thread().settings.size());
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_param_get_info(int index, xfer_param_info *info) {
    return guard("xfer_param_get_info", [&] {
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_param_get_info: info is NULL");
        const Enumeration &e = this_thread();
        if (!e.have_settings) enumerate_settings();
        check_index("xfer_param_get_info", index, e.settings.size());
        const Setting &s = e.settings[static_cast<std::size_t>(index)];
        info->section = s.section.c_str();
        info->name = s.name.c_str();
        info->env = s.env.c_str();
        info->type = s.type.c_str();
        info->value = s.value.c_str();
        info->default_value = s.default_value.c_str();
        info->help = s.help.c_str();
        info->source = s.source;
        return XFER_SUCCESS;
    });
}

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
// xfer_calibrate and the values an open context uses (xfer_context_setting_count,
// xfer_context_get_setting).
#include <string>

#include "calibration_scope.hpp"
#include "config.hpp"
#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

// What the calling thread's last xfer_calibrate and xfer_context_get_setting handed out: the
// strings live here until the thread's next call of the same function.
struct CalibrationText {
    std::string file, json;
};
thread_local CalibrationText t_calibration;
thread_local Setting t_setting;

std::size_t derived_count(const Context &c) { return c.table().derived_count; }

} // namespace

extern "C" {

XFER_API xfer_status xfer_calibrate(xfer_context ctx, unsigned flags, xfer_calibration_info *info) {
    constexpr const char *fn = "xfer_calibrate";
    return guard(fn, [&] {
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": info is NULL");
        if (info->struct_size < sizeof(xfer_calibration_info)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": info->struct_size is ", info->struct_size,
                  " (set it to sizeof(xfer_calibration_info), ", sizeof(xfer_calibration_info), " in this xfer.h)");
        }
        if ((flags & ~XFER_CALIBRATE_FORCE) != 0u) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": unknown flag bits 0x", std::hex, flags & ~XFER_CALIBRATE_FORCE,
                  " (only XFER_CALIBRATE_FORCE)");
        }
        const std::string setting = calibration_setting_now();
        Context &c = *lookup<Context>(ctx, fn, "ctx");
        ContextUse use(c, fn);
        const xfer_backend_table &t = c.table();
        if (t.context_calibrate == nullptr) {
            raise(XFER_ERROR_NOT_SUPPORTED, fn, ": backend '", c.name(),
                  "' has nothing to calibrate (it measures no copy path to choose between)");
        }
        xfer_calibration_info filled{};
        filled.struct_size = sizeof filled;
        const CalibrationScope scope(setting);
        call_backend(*c.plugin, fn, "context_calibrate", [&] { return t.context_calibrate(c.native, flags, &filled); });
        t_calibration.file = filled.file != nullptr ? filled.file : "";
        t_calibration.json = filled.json != nullptr ? filled.json : "";
        info->measured = filled.measured;
        info->seconds = filled.seconds;
        info->file = t_calibration.file.c_str();
        info->json = t_calibration.json.c_str();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_setting_count(xfer_context ctx, int *count) {
    constexpr const char *fn = "xfer_context_setting_count";
    return guard(fn, [&] {
        if (count == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": count is NULL");
        Context &c = *lookup<Context>(ctx, fn, "ctx");
        ContextUse use(c, fn);
        *count = static_cast<int>(c.params.size() + derived_count(c));
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_context_get_setting(xfer_context ctx, int index, xfer_param_info *info, int *derived) {
    constexpr const char *fn = "xfer_context_get_setting";
    return guard(fn, [&] {
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": info is NULL");
        Context &c = *lookup<Context>(ctx, fn, "ctx");
        ContextUse use(c, fn);
        const std::size_t params = c.params.size();
        const std::size_t total = params + derived_count(c);
        if (index < 0 || static_cast<std::size_t>(index) >= total) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": index ", index, " is out of range (", total, " values)");
        }
        const auto i = static_cast<std::size_t>(index);
        if (i < params) {
            t_setting = c.params[i];
        } else {
            const std::size_t j = i - params;
            // The row as xfer_open read it (the declaration, and what the user set), with the
            // value the backend actually derived where the user set none.
            t_setting = j < c.derived.size() ? c.derived[j] : Setting{};
            const xfer_backend_table &t = c.table();
            if (t.context_derived_value != nullptr && t_setting.source == XFER_PARAM_DEFAULT) {
                const char *value = nullptr;
                int calibrated = 0;
                call_backend(*c.plugin, fn, "context_derived_value",
                             [&] { return t.context_derived_value(c.native, j, &value, &calibrated); });
                if (value != nullptr) t_setting.value = value;
                if (calibrated != 0) t_setting.source = XFER_PARAM_CALIBRATION;
            }
        }
        info->section = t_setting.section.c_str();
        info->name = t_setting.name.c_str();
        info->env = t_setting.env.c_str();
        info->type = t_setting.type.c_str();
        info->value = t_setting.value.c_str();
        info->default_value = t_setting.default_value.c_str();
        info->help = t_setting.help.c_str();
        info->source = t_setting.source;
        if (derived != nullptr) *derived = i < params ? 0 : 1;
        return XFER_SUCCESS;
    });
}

} // extern "C"

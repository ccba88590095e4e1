// SPDX-License-Identifier: Apache-2.0
#include "xfer_plugin/params.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "core_services.hpp"
#include "xfer_plugin/errors.hpp"

namespace xfer::plugin {
namespace {

const char *find_value(const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept {
    const char *text = nullptr;
    for (std::size_t i = 0; params != nullptr && i < count; ++i) {
        if (params[i].name != nullptr && std::strcmp(params[i].name, name) == 0) {
            text = params[i].value; // the last one wins, as in a config file
        }
    }
    return text;
}

const xfer_backend_param *find_declared(const xfer_backend_param *declared, std::size_t declared_count,
                                        const char *name) noexcept {
    for (std::size_t i = 0; declared != nullptr && i < declared_count; ++i) {
        if (std::strcmp(declared[i].name, name) == 0) {
            return &declared[i];
        }
    }
    return nullptr;
}

xfer_status not_declared(const char *backend, const char *name) noexcept {
    return fail(XFER_ERROR_INTERNAL, "%s: parameter %s is read but not declared in the backend's table", backend, name);
}

} // namespace

xfer_status param_u64(const char *backend, const xfer_backend_param_value *params, std::size_t count, const char *name,
                      std::uint64_t fallback, std::uint64_t min, std::uint64_t max, std::uint64_t *out) noexcept {
    const char *text = find_value(params, count, name);
    if (text == nullptr) {
        *out = fallback;
        return XFER_SUCCESS;
    }
    errno = 0;
    char *end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || text[0] == '-') {
        return fail(XFER_ERROR_CONFIG, "%s: parameter %s = '%s' is not a non-negative decimal number", backend, name,
                    text);
    }
    if (value < min || value > max) {
        return fail(XFER_ERROR_CONFIG, "%s: parameter %s = '%s' is out of range [%llu, %llu]", backend, name, text,
                    static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
    }
    *out = value;
    return XFER_SUCCESS;
}

xfer_status param_u64(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                      const xfer_backend_param_value *params, std::size_t count, const char *name, std::uint64_t min,
                      std::uint64_t max, std::uint64_t *out) noexcept {
    const xfer_backend_param *decl = find_declared(declared, declared_count, name);
    if (decl == nullptr) {
        return not_declared(backend, name);
    }
    // The declared text is parsed like a value, without the range (which bounds the effective value).
    const xfer_backend_param_value as_value{name, decl->default_value};
    std::uint64_t fallback = 0;
    if (auto st = param_u64(backend, &as_value, 1, name, 0, 0, ~std::uint64_t{0}, &fallback)) {
        return st;
    }
    return param_u64(backend, params, count, name, fallback, min, max, out);
}

const char *param_text(const xfer_backend_param *declared, std::size_t declared_count,
                       const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept {
    if (const char *text = find_value(params, count, name)) {
        return text;
    }
    const xfer_backend_param *decl = find_declared(declared, declared_count, name);
    return decl != nullptr ? decl->default_value : nullptr;
}

xfer_status param_choice(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                         const xfer_backend_param_value *params, std::size_t count, const char *name,
                         const char *const *choices, std::size_t choice_count, std::size_t *index) noexcept {
    const char *text = param_text(declared, declared_count, params, count, name);
    if (text == nullptr) {
        return not_declared(backend, name);
    }
    char names[256] = {0};
    std::size_t used = 0;
    for (std::size_t i = 0; i < choice_count; ++i) {
        if (std::strcmp(text, choices[i]) == 0) {
            *index = i;
            return XFER_SUCCESS;
        }
        const int n = std::snprintf(names + used, sizeof names - used, "%s%s", i == 0 ? "" : ", ", choices[i]);
        if (n > 0) {
            used = used + static_cast<std::size_t>(n) < sizeof names ? used + static_cast<std::size_t>(n)
                                                                     : sizeof names - 1;
        }
    }
    return fail(XFER_ERROR_CONFIG, "%s: parameter %s = '%s' is not one of %s", backend, name, text, names);
}

const char *calibration_setting() noexcept {
    const xfer_core_services *core = core_services();
    if (core == nullptr ||
        core->struct_size < offsetof(xfer_core_services, calibration_setting) + sizeof core->calibration_setting ||
        core->calibration_setting == nullptr) {
        return "";
    }
    const char *text = core->calibration_setting();
    return text != nullptr ? text : "";
}

} // namespace xfer::plugin

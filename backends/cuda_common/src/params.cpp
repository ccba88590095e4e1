// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/params.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "xfer_cuda/services.hpp"

namespace xfer::cuda {

namespace {
const char *find_value(const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept {
    const char *text = nullptr;
    for (std::size_t i = 0; params != nullptr && i < count; ++i) {
        if (params[i].name != nullptr && std::strcmp(params[i].name, name) == 0) {
            text = params[i].value;
        }
    }
    return text;
}

const char *declared_default(const xfer_backend_param *declared, std::size_t declared_count,
                             const char *name) noexcept {
    for (std::size_t i = 0; declared != nullptr && i < declared_count; ++i) {
        if (std::strcmp(declared[i].name, name) == 0) {
            return declared[i].default_value;
        }
    }
    return nullptr;
}
}  // namespace

xfer_status param_u64(const char *backend, const xfer_backend_param_value *params, std::size_t count,
                      const char *name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                      std::uint64_t *out) noexcept {
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
        return fail(XFER_ERROR_CONFIG, "%s: parameter %s = %llu is out of range [%llu, %llu]", backend, name, value,
                    static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
    }
    *out = value;
    return XFER_SUCCESS;
}


xfer_status param_u64(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                      const xfer_backend_param_value *params, std::size_t count, const char *name, std::uint64_t min,
                      std::uint64_t max, std::uint64_t *out) noexcept {
    std::uint64_t fallback = 0;
    if (const char *text = declared_default(declared, declared_count, name)) {
        const xfer_backend_param_value as_value{name, text};
        // The range applies to the effective value only (it may depend on another parameter).
        if (auto st = param_u64(backend, &as_value, 1, name, 0, 0, ~std::uint64_t{0}, &fallback)) {
            return st;
        }
    }
    return param_u64(backend, params, count, name, fallback, min, max, out);
}

const char *param_text(const xfer_backend_param *declared, std::size_t declared_count,
                       const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept {
    const char *text = find_value(params, count, name);
    return text != nullptr ? text : declared_default(declared, declared_count, name);
}

}  // namespace xfer::cuda

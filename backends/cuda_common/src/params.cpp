// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/params.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "xfer_cuda/services.hpp"

namespace xfer::cuda {

xfer_status param_u64(const char *backend, const xfer_backend_param_value *params, std::size_t count,
                      const char *name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                      std::uint64_t *out) noexcept {
    const char *text = nullptr;
    for (std::size_t i = 0; params != nullptr && i < count; ++i) {
        if (params[i].name != nullptr && std::strcmp(params[i].name, name) == 0) {
            text = params[i].value;
        }
    }
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

}  // namespace xfer::cuda

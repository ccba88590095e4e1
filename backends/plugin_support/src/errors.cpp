// SPDX-License-Identifier: Apache-2.0
#include "xfer_plugin/errors.hpp"

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdio>

#include "core_services.hpp"

namespace xfer::plugin {
namespace {
std::atomic<const xfer_core_services *> g_core{nullptr};
}

void set_core_services(const xfer_core_services *core) noexcept { g_core.store(core); }

const xfer_core_services *core_services() noexcept { return g_core.load(std::memory_order_acquire); }

xfer_status fail(xfer_status status, const char *format, ...) noexcept {
    const xfer_core_services *core = core_services();
    // An older core may hand a smaller services struct: only call what it really has.
    const bool has_set_error = core != nullptr &&
                               core->struct_size >= offsetof(xfer_core_services, set_error) + sizeof core->set_error &&
                               core->set_error != nullptr;
    if (has_set_error) {
        char message[1024];
        va_list args;
        va_start(args, format);
        std::vsnprintf(message, sizeof message, format, args);
        va_end(args);
        core->set_error(status, message);
    }
    return status;
}

} // namespace xfer::plugin

// SPDX-License-Identifier: Apache-2.0
#include "host_errors.hpp"

#include <atomic>
#include <cstddef>

namespace xfer_host {
namespace {
std::atomic<const xfer_core_services *> g_core{nullptr};
}

void set_core_services(const xfer_core_services *core) noexcept { g_core.store(core); }

void report(xfer_status status, const char *message) noexcept {
    const xfer_core_services *core = g_core.load();
    // An older core may hand a smaller services struct; only call what it really has.
    if (core == nullptr || core->struct_size < offsetof(xfer_core_services, set_error) + sizeof(core->set_error) ||
        core->set_error == nullptr) {
        return;
    }
    core->set_error(status, message);
}

void report(xfer_status status, const std::string &message) noexcept { report(status, message.c_str()); }

xfer_status report_failure(xfer_status status, const char *operation, const char *detail) noexcept {
    try {
        report(status, std::string(operation) + ": " + detail);
    } catch (...) {
        report(status, operation);
    }
    return status;
}

std::string system_error_text(const std::system_error &e) noexcept {
    try {
        return std::string(e.what()) + " (std::system_error, error code " + std::to_string(e.code().value()) + ")";
    } catch (...) {
        return {};
    }
}

std::string exception_text(const std::exception &e) noexcept {
    try {
        return std::string("unexpected exception: ") + e.what();
    } catch (...) {
        return {};
    }
}

}  // namespace xfer_host

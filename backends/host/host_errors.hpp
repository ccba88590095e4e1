// SPDX-License-Identifier: Apache-2.0
// Error reporting for the host backend: the bridge to core->set_error and the one place where
// C++ exceptions are turned into statuses, so none crosses the plugin boundary.
#pragma once

#include <xfer/xfer_backend.h>

#include <new>
#include <string>
#include <system_error>

namespace xfer_host {

// Remembers the core's services (handed to xfer_backend_entry) for report().
void set_core_services(const xfer_core_services *core) noexcept;

// Sets the calling thread's xfer_last_error() message through the core. Never throws: if the
// message cannot be built, a fixed fallback text is reported instead.
void report(xfer_status status, const std::string &message) noexcept;
void report(xfer_status status, const char *message) noexcept;

// Texts for caught exceptions; they return a fixed string if they cannot allocate.
std::string system_error_text(const std::system_error &e) noexcept;
std::string exception_text(const std::exception &e) noexcept;

// Reports "<operation>: <detail>" and returns `status`. Never throws: if the message cannot be
// built (no memory), `operation` alone is reported.
xfer_status report_failure(xfer_status status, const char *operation, const char *detail) noexcept;

// Runs `body` (returning xfer_status) and maps any exception to a status with a message that
// names `operation`. std::bad_alloc is an out-of-memory condition the caller can recover from;
// std::system_error comes from the OS (thread creation, mutexes); anything else is our bug.
template <class Body>
xfer_status guarded(const char *operation, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return report_failure(XFER_ERROR_OUT_OF_MEMORY, operation, "out of host memory (std::bad_alloc)");
    } catch (const std::system_error &e) {
        return report_failure(XFER_ERROR_BACKEND, operation, system_error_text(e).c_str());
    } catch (const std::exception &e) {
        return report_failure(XFER_ERROR_INTERNAL, operation, exception_text(e).c_str());
    } catch (...) {
        return report_failure(XFER_ERROR_INTERNAL, operation, "unexpected non-standard exception");
    }
}

}  // namespace xfer_host

// SPDX-License-Identifier: Apache-2.0
// How a plugin talks back to the core: the core's services (handed to xfer_backend_entry), the
// one way a failure is reported (fail), and the exception fence every entry runs inside
// (guarded), so that no C++ exception crosses the C plugin ABI.
//
// Every plugin links its own copy of this library (static, PIC), so each plugin keeps its own
// pointer to the core's services. Nothing here needs CUDA.
#pragma once

#include <exception>
#include <new>
#include <system_error>

#include <xfer/xfer_backend.h>

namespace xfer::plugin {

// Remembers the core's services; the plugin's xfer_backend_entry calls it first. Thread-safe.
void set_core_services(const xfer_core_services *core) noexcept;

// Reports `status` with a printf-style message through core->set_error (the calling thread's
// xfer_last_error()) and returns `status`, so a failure is one line:
// `return fail(XFER_ERROR_..., "...", ...)`. The message is formatted into a fixed buffer
// (1023 characters at most, truncated beyond): it never allocates and never throws. A core
// older than set_error (its services struct is too small: struct_size is checked), or no core
// at all (a test driving the plugin directly), still gets the status; only the detail is lost.
xfer_status fail(xfer_status status, const char *format, ...) noexcept
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// When a release path makes two calls and reports both, the later message is the one
// xfer_last_error() shows, so its status is the one to return.
inline xfer_status last_failure(xfer_status earlier, xfer_status later) noexcept {
    return later != XFER_SUCCESS ? later : earlier;
}

// Runs `body` (returning xfer_status) and turns any exception into a status with a message
// that starts with `operation`:
//   std::bad_alloc       -> XFER_ERROR_OUT_OF_MEMORY  (recoverable: the caller may free memory)
//   std::system_error    -> XFER_ERROR_BACKEND        (the OS refused: a thread, a mutex)
//   other std::exception -> XFER_ERROR_INTERNAL       (a bug of the plugin)
//   anything else        -> XFER_ERROR_INTERNAL
// Formatting the message allocates nothing (fail), so the fence works when memory is gone.
template <class Body>
xfer_status guarded(const char *operation, Body &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(XFER_ERROR_OUT_OF_MEMORY, "%s: out of host memory (std::bad_alloc)", operation);
    } catch (const std::system_error &e) {
        return fail(XFER_ERROR_BACKEND, "%s: %s (std::system_error, error code %d)", operation, e.what(),
                    e.code().value());
    } catch (const std::exception &e) {
        return fail(XFER_ERROR_INTERNAL, "%s: unexpected exception: %s", operation, e.what());
    } catch (...) {
        return fail(XFER_ERROR_INTERNAL, "%s: unexpected non-standard exception", operation);
    }
}

} // namespace xfer::plugin

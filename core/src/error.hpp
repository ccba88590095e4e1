// SPDX-License-Identifier: Apache-2.0
// How the core reports failures internally (Error, an exception carrying a status, in
// xfer_config/status_error.hpp) and how the C entry points turn them into a status plus
// xfer_last_error() (guard).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "last_error.hpp"
#include "xfer_config/status_error.hpp"
#include <xfer/xfer.h>

namespace xfer::core {

// Records the message for the calling thread and returns the status.
inline xfer_status fail(xfer_status status, const std::string &message) noexcept {
    set_last_error(message);
    return status;
}

// Records "<function>: <text><detail>" without ever throwing (building the string may fail
// when memory is exhausted; then the plain text is kept).
inline void record_failure(const char *function, const char *text, const char *detail = "") noexcept {
    try {
        set_last_error(std::string(function) + ": " + text + detail);
    } catch (...) {
        set_last_error(text);
    }
}

// Runs body (returning xfer_status) and converts every exception into a status, so that
// nothing is thrown across the C boundary. `function` names the API entry for messages.
template <class Body>
xfer_status guard(const char *function, Body &&body) noexcept {
    try {
        return body();
    } catch (const Error &e) {
        set_last_error(e.what());
        return e.status();
    } catch (const std::bad_alloc &) {
        record_failure(function, "out of host memory inside the xfer core");
        return XFER_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        record_failure(function, "internal error: ", e.what());
        return XFER_ERROR_INTERNAL;
    } catch (...) {
        record_failure(function, "internal error: unknown exception");
        return XFER_ERROR_INTERNAL;
    }
}

// For entry points that return a value instead of a status (xfer_host_ptr, ...):
// on any failure the message is recorded and `fallback` returned.
template <class T, class Body>
T guard_value(const char *function, T fallback, Body &&body) noexcept {
    T result = fallback;
    xfer_status st = guard(function, [&] {
        result = body();
        return XFER_SUCCESS;
    });
    return st == XFER_SUCCESS ? result : fallback;
}

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
// Version, status names and the last-error message: the entry points that need no backend.
#include "error.hpp"
#include "last_error.hpp"
#include <xfer/xfer.h>

extern "C" {

XFER_API xfer_status xfer_get_version(int *major, int *minor, int *patch) {
    if (major == nullptr || minor == nullptr || patch == nullptr) {
        return xfer::core::fail(XFER_ERROR_INVALID_ARGUMENT, std::string("xfer_get_version: ") +
                                                                 (major == nullptr   ? "major"
                                                                  : minor == nullptr ? "minor"
                                                                                     : "patch") +
                                                                 " is NULL");
    }
    *major = XFER_VERSION_MAJOR;
    *minor = XFER_VERSION_MINOR;
    *patch = XFER_VERSION_PATCH;
    return XFER_SUCCESS;
}

XFER_API const char *xfer_status_string(xfer_status st) {
    switch (st) {
    case XFER_SUCCESS:
        return "XFER_SUCCESS";
    case XFER_ERROR_INVALID_ARGUMENT:
        return "XFER_ERROR_INVALID_ARGUMENT";
    case XFER_ERROR_INVALID_HANDLE:
        return "XFER_ERROR_INVALID_HANDLE";
    case XFER_ERROR_INVALID_SIZE:
        return "XFER_ERROR_INVALID_SIZE";
    case XFER_ERROR_OUT_OF_BOUNDS:
        return "XFER_ERROR_OUT_OF_BOUNDS";
    case XFER_ERROR_OUT_OF_MEMORY:
        return "XFER_ERROR_OUT_OF_MEMORY";
    case XFER_ERROR_NOT_READY:
        return "XFER_ERROR_NOT_READY";
    case XFER_ERROR_NOT_SUPPORTED:
        return "XFER_ERROR_NOT_SUPPORTED";
    case XFER_ERROR_NO_DEVICE:
        return "XFER_ERROR_NO_DEVICE";
    case XFER_ERROR_BACKEND_NOT_FOUND:
        return "XFER_ERROR_BACKEND_NOT_FOUND";
    case XFER_ERROR_BACKEND_UNAVAILABLE:
        return "XFER_ERROR_BACKEND_UNAVAILABLE";
    case XFER_ERROR_BACKEND_ABI:
        return "XFER_ERROR_BACKEND_ABI";
    case XFER_ERROR_CONFIG:
        return "XFER_ERROR_CONFIG";
    case XFER_ERROR_BACKEND:
        return "XFER_ERROR_BACKEND";
    case XFER_ERROR_INVALID_STATE:
        return "XFER_ERROR_INVALID_STATE";
    case XFER_ERROR_INTERNAL:
        return "XFER_ERROR_INTERNAL";
    case XFER_ERROR_SLOW_PATH:
        return "XFER_ERROR_SLOW_PATH";
    case XFER_STATUS_FORCE_INT32:
        break;
    }
    return "XFER_ERROR_UNKNOWN_STATUS";
}

XFER_API const char *xfer_last_error(void) { return xfer::core::last_error(); }

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
// The exception the core throws internally, the grammar included: a status plus a message.
// It lives with the grammar because the grammar's failures are XFER_ERROR_CONFIG errors that
// the core hands on unchanged; core/src/error.hpp adds the C boundary (guard) around it.
#pragma once

#include <exception>
#include <sstream>
#include <string>
#include <utility>

#include <xfer/xfer.h>

namespace xfer::core {

// Thrown inside the core only; guard() (core/src/error.hpp) stops it at the C boundary.
class Error : public std::exception {
  public:
    Error(xfer_status status, std::string message) : status_(status), message_(std::move(message)) {}
    xfer_status status() const noexcept { return status_; }
    const char *what() const noexcept override { return message_.c_str(); }

  private:
    xfer_status status_;
    std::string message_;
};

// Builds a message from streamable parts: msg("device ", 3, " requested").
template <class... Parts>
std::string msg(const Parts &...parts) {
    std::ostringstream out;
    (out << ... << parts);
    return out.str();
}

template <class... Parts>
[[noreturn]] void raise(xfer_status status, const Parts &...parts) {
    throw Error(status, msg(parts...));
}

} // namespace xfer::core

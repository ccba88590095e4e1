// SPDX-License-Identifier: Apache-2.0
#include "last_error.hpp"

#include <new>

namespace xfer::core {
namespace {

thread_local std::string t_message;

constexpr const char *kFallback = "xfer: out of memory while recording an error message";

} // namespace

void set_last_error(const char *message) noexcept {
    ++t_error_generation;
    try {
        t_message = message != nullptr ? message : "(a backend reported an error without a message)";
    } catch (...) {
        // Assigning from a literal keeps the capacity already held, so this cannot throw again
        // once the string has ever held a message; if it does, leave what was there.
        try {
            t_message = kFallback;
        } catch (...) {}
    }
}

void set_last_error(const std::string &message) noexcept { set_last_error(message.c_str()); }

const char *last_error() noexcept { return t_message.c_str(); }

extern "C" void plugin_set_error(xfer_status /*status*/, const char *message) {
    // The status is returned by the entry itself; the message is what the user needs.
    set_last_error(message);
}

ErrorCapture::ErrorCapture() : saved_(t_message), start_generation_(t_error_generation) {}

ErrorCapture::~ErrorCapture() {
    try {
        t_message = std::move(saved_);
    } catch (...) {}
}

std::string ErrorCapture::captured() const {
    return t_error_generation != start_generation_ ? t_message : std::string();
}

} // namespace xfer::core

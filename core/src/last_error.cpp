// SPDX-License-Identifier: Apache-2.0
#include "last_error.hpp"

#include <new>

#include "thread_lasting.hpp"

namespace xfer::core {
namespace {

// The thread's message, usable from exit handlers too (thread_lasting.hpp).
struct LastMessage {
    std::string text;
    void release() noexcept { std::string().swap(text); }
};
struct LastMessageTag;
std::string &message_of_this_thread() noexcept { return ThreadLasting<LastMessage, LastMessageTag>::get().text; }

constexpr const char *kFallback = "xfer: out of memory while recording an error message";

} // namespace

void set_last_error(const char *message) noexcept {
    ++t_error_generation;
    std::string &text = message_of_this_thread();
    try {
        text = message != nullptr ? message : "(a backend reported an error without a message)";
    } catch (...) {
        // Assigning from a literal keeps the capacity already held, so this cannot throw again
        // once the string has ever held a message; if it does, leave what was there.
        try {
            text = kFallback;
        } catch (...) {}
    }
}

void set_last_error(const std::string &message) noexcept { set_last_error(message.c_str()); }

const char *last_error() noexcept { return message_of_this_thread().c_str(); }

extern "C" void plugin_set_error(xfer_status /*status*/, const char *message) {
    // The status is returned by the entry itself; the message is what the user needs.
    set_last_error(message);
}

ErrorCapture::ErrorCapture() : saved_(message_of_this_thread()), start_generation_(last_error_generation()) {}

ErrorCapture::~ErrorCapture() {
    try {
        message_of_this_thread() = std::move(saved_);
    } catch (...) {}
}

std::string ErrorCapture::captured() const {
    return last_error_generation() != start_generation_ ? message_of_this_thread() : std::string();
}

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
// The calling thread's xfer_last_error() message, and the set_error service plugins use.
#pragma once

#include <cstdint>
#include <string>

#include <xfer/xfer.h>

namespace xfer::core {

// Replaces the calling thread's message. Never throws: on allocation failure a fixed
// fallback text is kept, so error reporting cannot itself fail.
void set_last_error(const char *message) noexcept;
void set_last_error(const std::string &message) noexcept;

const char *last_error() noexcept;

// Counts set_last_error calls on this thread. The core compares it before and after a
// backend call to tell whether the backend explained its failure itself. Read inline, since
// every backend call reads it (trivially destructible: usable in exit handlers too).
inline thread_local std::uint64_t t_error_generation = 0;
inline std::uint64_t last_error_generation() noexcept { return t_error_generation; }

// The set_error entry of xfer_core_services handed to every plugin.
extern "C" void plugin_set_error(xfer_status status, const char *message);

// Runs a probe-like call without disturbing the thread's visible message: whatever the
// call sets is captured and the previous message restored afterwards. Used where a plugin
// failure is reported as data (a backend's "reason"), not as the status of the API call.
class ErrorCapture {
  public:
    ErrorCapture();
    ~ErrorCapture();
    ErrorCapture(const ErrorCapture &) = delete;
    ErrorCapture &operator=(const ErrorCapture &) = delete;
    // The message set since construction ("" when none).
    std::string captured() const;

  private:
    std::string saved_;
    std::uint64_t start_generation_;
};

} // namespace xfer::core

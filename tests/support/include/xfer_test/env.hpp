// SPDX-License-Identifier: Apache-2.0
// Environment isolation: a variable set (or unset) for one scope.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace xfer::test {

// Sets (or unsets, with nullopt / nullptr) one environment variable and puts the old value,
// or its absence, back on destruction.
class EnvGuard {
  public:
    EnvGuard(std::string name, const std::optional<std::string> &value) : name_(std::move(name)) {
        if (const char *old = std::getenv(name_.c_str())) saved_ = old;
        if (value)
            ::setenv(name_.c_str(), value->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }
    EnvGuard(const char *name, const char *value)
        : EnvGuard(name, value != nullptr ? std::optional<std::string>(value) : std::nullopt) {}
    ~EnvGuard() {
        if (saved_)
            ::setenv(name_.c_str(), saved_->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }
    EnvGuard(const EnvGuard &) = delete;
    EnvGuard &operator=(const EnvGuard &) = delete;

  private:
    std::string name_;
    std::optional<std::string> saved_;
};

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
#include "calibration_scope.hpp"

#include <utility>

namespace xfer::core {
namespace {
thread_local std::string t_setting;
}

CalibrationScope::CalibrationScope(const std::string &setting) : saved_(std::exchange(t_setting, setting)) {}

CalibrationScope::~CalibrationScope() { t_setting = std::move(saved_); }

const char *calibration_setting_service() noexcept { return t_setting.c_str(); }

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
// The effective `calibration` setting handed to a plugin while the core calls it
// (xfer_core_services::calibration_setting, plugin ABI 1.8): set on the calling thread for the
// span of a context_create or context_calibrate call, "" outside one.
#pragma once

#include <string>

namespace xfer::core {

class CalibrationScope {
  public:
    explicit CalibrationScope(const std::string &setting);
    ~CalibrationScope();
    CalibrationScope(const CalibrationScope &) = delete;
    CalibrationScope &operator=(const CalibrationScope &) = delete;

  private:
    std::string saved_;
};

// The core service: the setting of the scope open on this thread ("" when none).
const char *calibration_setting_service() noexcept;

} // namespace xfer::core

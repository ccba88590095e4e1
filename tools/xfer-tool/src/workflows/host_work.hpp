// SPDX-License-Identifier: Apache-2.0
// A fixed amount of host computation that the sync-async workflow runs between enqueueing a
// copy and synchronising, to show how much of the copy the host can hide behind its own work.
#pragma once

#include <cstdint>

namespace xfer::tool {

class HostWork {
  public:
    // Chooses the number of work units that take about target_ms on this host. The amount
    // is then fixed: blocking and asynchronous runs do exactly the same work.
    void calibrate(double target_ms);
    std::uint64_t units() const { return units_; }
    // Does the work; the result only keeps the compiler from dropping it.
    std::uint64_t run() const;

  private:
    std::uint64_t units_ = 1;
};

} // namespace xfer::tool

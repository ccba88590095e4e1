// SPDX-License-Identifier: Apache-2.0
// xfer_register on the host backend: bookkeeping only. There is no device DMA to speed up, but
// the same checks and statuses as on the CUDA backends let CI test the API without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include <xfer/xfer_backend.h>

namespace xfer::host {

class HostRegistry {
  public:
    // INVALID_STATE when [ptr, ptr + bytes) overlaps a range already registered.
    xfer_status add(void *ptr, std::size_t bytes);
    // INVALID_ARGUMENT (reported) when ptr is not the start of a registered range.
    xfer_status check_start(void *ptr);
    // As check_start, then forgets the range.
    xfer_status remove(void *ptr);
    void stats(xfer_registration_stats *out);

  private:
    std::mutex mutex_;
    std::map<std::uintptr_t, std::size_t> ranges_; // start -> bytes
    std::uint64_t bytes_ = 0;
};

} // namespace xfer::host

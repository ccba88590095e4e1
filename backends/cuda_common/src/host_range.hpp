// SPDX-License-Identifier: Apache-2.0
// Whether a host address range is mapped in this process, asked of the kernel (mincore), so
// that a copy xfer splits itself never reads or writes past the memory the caller has: a range
// with an unmapped page is refused instead of handed to the driver, which would fault on it.
#pragma once

#include <cstddef>

namespace xfer::cuda {

// True when every page of [ptr, ptr + bytes) is mapped (resident or not); false when one is
// not, or when the kernel cannot say. bytes 0: true.
bool host_range_mapped(const void *ptr, std::size_t bytes) noexcept;

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "host_range.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <vector>

namespace xfer::cuda {

bool host_range_mapped(const void *ptr, std::size_t bytes) noexcept {
    if (bytes == 0) {
        return true;
    }
    const long page_size = sysconf(_SC_PAGESIZE);
    const auto page = static_cast<std::uintptr_t>(page_size > 0 ? page_size : 4096);
    const auto start = reinterpret_cast<std::uintptr_t>(ptr) / page * page;
    const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(ptr) + bytes;
    if (end < start) {
        return false; // wraps around the address space
    }
    const std::size_t length = end - start;
    try {
        // mincore fails with ENOMEM when a page of the range is not mapped.
        std::vector<unsigned char> residency((length + page - 1) / page);
        return mincore(reinterpret_cast<void *>(start), length, residency.data()) == 0;
    } catch (const std::bad_alloc &) {
        return false;
    }
}

} // namespace xfer::cuda

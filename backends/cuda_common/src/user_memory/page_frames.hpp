// SPDX-License-Identifier: Apache-2.0
// The physical identity of host pages, from Linux's /proc/self/pagemap: how the registration
// cache knows that a cached range still maps the pages it page-locked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xfer::cuda::user_memory {

constexpr std::size_t kPageBytes = 4096;

// True when this process can read page frame numbers (Linux hides them, as zeros, from
// processes without CAP_SYS_ADMIN). Probed once.
bool page_frames_readable() noexcept;

// The frame number of each of `pages` pages from `start` (page-aligned). False when a page is
// not present (never touched, swapped) or pagemap cannot be read.
bool read_page_frames(std::uintptr_t start, std::size_t pages, std::vector<std::uint64_t> *out) noexcept;

// True when the `pages` pages from `start` still map the frames `expected` (from the same
// start). Reads pagemap in blocks: no allocation beyond a fixed buffer.
bool same_page_frames(std::uintptr_t start, std::size_t pages, const std::uint64_t *expected) noexcept;

} // namespace xfer::cuda::user_memory

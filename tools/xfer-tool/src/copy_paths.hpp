// SPDX-License-Identifier: Apache-2.0
// Which path each copy of a workflow took: the library's per-context statistics
// (xfer_context_get_stats) read into a PathBreakdown (result.hpp), and the short text the
// table and `compare` print for it.
#pragma once

#include <cstddef>
#include <string>

#include "result.hpp"
#include "xfer_handles.hpp"

namespace xfer::tool {

// Sets the context's counters to 0 (xfer_context_reset_stats). Throws XferError.
void reset_copy_paths(const Context &ctx);
// Adds what the context counted since its last reset (or since it was opened) to `out` and
// marks it measured. Throws XferError.
void add_copy_paths(PathBreakdown &out, const Context &ctx);

// "staged 64 copies 1 GiB, driver_pageable 2 copies 4 KiB; 2 slow copies; 3 registrations"
// (slow copies and registrations only when there were some); "no copies" when nothing moved.
std::string paths_text(const PathBreakdown &paths);
// The paths that moved the most bytes, with their shares: "staged 97%, driver_pageable 3%",
// at most `top` of them ("+2 more" after); "no copies" when nothing moved, "" when not measured.
std::string top_paths_text(const PathBreakdown &paths, std::size_t top);

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// `compare`: the side-by-side table of every backend's medians and one recommendation per
// transfer pattern, derived from the workflow results of one run.
#pragma once

#include <ostream>
#include <vector>

#include "result.hpp"

namespace xfer::tool {

// One line per pattern (large one-off transfers, streaming, many small copies, data read once
// by a kernel): the backend with the lowest median time among results that verified.
std::vector<Recommendation> recommend(const std::vector<WorkflowResult> &results);

// Side-by-side medians (rows: figures, columns: backends), then the recommendations.
void write_comparison(std::ostream &out, const Report &report);

} // namespace xfer::tool

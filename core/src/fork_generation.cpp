// SPDX-License-Identifier: Apache-2.0
#include "fork_generation.hpp"

namespace xfer::core {

std::atomic<std::uint64_t> g_fork_generation{0};

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
// Reading a backend's effective parameters (already validated by the core against the declared
// type: ints and sizes arrive as decimal text).
#pragma once

#include <cstddef>
#include <cstdint>

#include <xfer/xfer_backend.h>

namespace xfer::cuda {

// Finds `name` among the values and parses it as an unsigned decimal in [min, max].
// Missing -> `fallback` (the declared default). CONFIG with a message naming backend, parameter
// and value when it is not a number or out of range.
xfer_status param_u64(const char *backend, const xfer_backend_param_value *params, std::size_t count,
                      const char *name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max,
                      std::uint64_t *out) noexcept;

}  // namespace xfer::cuda

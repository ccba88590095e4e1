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

// The same, with the declared default of `name` in the backend's table `declared` as the
// fallback, parsed like any value: a default is written once, as the declared text, and never
// restated as a number (so declared integer and size defaults are plain decimals).
xfer_status param_u64(const char *backend, const xfer_backend_param *declared, std::size_t declared_count,
                      const xfer_backend_param_value *params, std::size_t count, const char *name, std::uint64_t min,
                      std::uint64_t max, std::uint64_t *out) noexcept;

// The value of the string parameter `name`, else its declared default in `declared` (nullptr
// when `name` is not declared there).
const char *param_text(const xfer_backend_param *declared, std::size_t declared_count,
                       const xfer_backend_param_value *params, std::size_t count, const char *name) noexcept;

}  // namespace xfer::cuda

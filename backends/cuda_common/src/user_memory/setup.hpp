// SPDX-License-Identifier: Apache-2.0
// A context's part in copies of user memory, set up when it opens: the parameters every CUDA
// backend declares for them (path, pin_limit, host_threads), the calibration (kept, or measured
// now), the values derived from it (the staged crossovers, registration_min), and the
// registration cache that carries the copy policy out. Also xfer_calibrate's body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "copy_policy.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::user_memory {

// Declared after each CUDA backend's own parameters: the limits a user owns and the override.
extern const xfer_backend_param kCommonParams[];
extern const std::size_t kCommonParamCount;
// Derived by every CUDA backend (after the backend's own derived values): registration_min.
extern const xfer_backend_param kCommonDerived[];
extern const std::size_t kCommonDerivedCount;
// Derived by a backend with a staging engine (whose buffers have pageable host views): the
// staged crossovers and buffer_registration_min.
extern const xfer_backend_param kStagedDerived[];
extern const std::size_t kStagedDerivedCount;

struct CommonParams {
    PathOverride path = PathOverride::automatic;
    std::uint64_t pin_limit = 0;
    std::size_t host_threads = 1; // resolved: never 0
    // The common derived values a user set (else derived once the calibration is known).
    std::optional<std::uint64_t> registration_min;
    std::optional<std::uint64_t> staged_min[2]; // [0: to the device, 1: to the host]
    std::optional<std::uint64_t> buffer_registration_min;
};

// Reads the common parameters and the derived values the user set, before the device is
// touched; XFER_ERROR_CONFIG naming a bad one (path = staged on a backend without a staging
// engine among them).
xfer_status read_common_params(const char *backend, bool stages, const xfer_backend_param_value *values,
                               std::size_t count, CommonParams *out) noexcept;

// With ctx's device bound: the calibration of this GPU (the kept one, or measured now unless
// `calibration` is off or measuring fails: then none, and the declared defaults decide), the
// derived values (noted in ctx.derived_values) and ctx.cache.
xfer_status open_user_memory(Context &ctx, bool stages, UserMemoryRule rule, const CommonParams &params) noexcept;

// xfer_calibrate: reads the kept calibration of ctx's device if it still holds (unless
// `force`), else measures and keeps it; fills `info` (strings in thread-local storage).
xfer_status calibrate(const Context &ctx, bool force, xfer_calibration_info *info) noexcept;

} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
// The pinned backend's context: a CUDA context with the registration cache for raw copies from
// and to unregistered user memory, configured by the backend's declared parameters.
#pragma once

#include <cstddef>
#include <memory>

#include "registration_cache.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer/xfer_backend.h>

namespace xfer::cuda::pinned {

struct PinnedContext : Context {
    std::unique_ptr<RegistrationCache> cache; // nullptr when registration_cache is 0

    xfer_status cache_pageable_copy(void *dst, const void *src, std::size_t bytes, Memory to, Memory from,
                                    bool pages_proven, cudaStream_t s, bool *taken) const noexcept override;
    void forget_cached_registrations(const void *ptr, std::size_t bytes) const noexcept override;
    bool drop_stale_registrations(const void *ptr, std::size_t bytes, bool prove_pages) const noexcept override;
    void cache_stats(xfer_registration_stats *out) const noexcept override;
    xfer_path_reason direct_pageable_reason(std::size_t bytes) const noexcept override {
        if (!cache) return XFER_REASON_CONFIGURED;
        return cache_may_take(bytes) ? RegistrationCache::last_decline() : XFER_REASON_BELOW_CROSSOVER;
    }
    xfer_status close() noexcept override;
};

extern const xfer_backend_param kParams[];
extern const std::size_t kParamCount;

// ContextFactory of the pinned backend (reads the parameters; CONFIG naming a bad one).
xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out);

} // namespace xfer::cuda::pinned

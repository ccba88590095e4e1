// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: a copy between pageable host memory and device memory whose path the
// copy policy already chose (memcpy.cpp asked the registration cache before classifying).
#pragma once

#include "user_memory/copy_policy.hpp"
#include "user_memory/registration_cache.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

// Carries out `plan` (staged or driver; never a registration: the cache did those): the staging
// engine (the context's hook) for a staged plan, or for a small copy to the device on a stream
// whose earlier work may still write host memory (the engine waits in stream order where the
// driver would need a stream wait); else cudaMemcpyAsync with the plan's reason.
xfer_status copy_pageable_planned(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                                  cudaStream_t stream, const user_memory::Decision &plan, const char *what) noexcept;

// The driver refuses a copy that runs across the end of a registration (cudaErrorInvalidValue,
// nothing queued). The registration cache may have page-locked a range sharing a page with
// [a, a + bytes) or [b, b + bytes) (b may be nullptr) since the caller dropped straddled ranges:
// another thread's copy, or the background registrar, page-locks whole pages. `copy` is tried
// again after such ranges went, at most a few times (each retry needs another registration in
// the same instant); a refusal with no cached range to blame is returned as it came.
template <class Copy>
cudaError_t retry_if_straddled(const Context &ctx, const void *a, const void *b, std::size_t bytes, cudaError_t err,
                               Copy copy) noexcept {
    constexpr int kStraddleRetries = 3;
    for (int retry = 0; err == cudaErrorInvalidValue && retry < kStraddleRetries; ++retry) {
        const bool a_went = ctx.cache->drop_stale(a, bytes, false);
        const bool b_went = b != nullptr && ctx.cache->drop_stale(b, bytes, false);
        if (!a_went && !b_went) break; // none cached: the refusal is the caller's
        (void)cudaGetLastError();
        err = copy();
    }
    return err;
}

} // namespace xfer::cuda

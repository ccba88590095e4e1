// SPDX-License-Identifier: Apache-2.0
#include "pinned_context.hpp"

#include "xfer_cuda/backend.hpp"

namespace xfer::cuda::pinned {

constexpr xfer_backend_param kParams[] = {
    {"registration_cache", "size", "4294967296",
     "byte limit of the registration cache: xfer_memcpy_async between unregistered user memory and device memory "
     "page-locks the user's range once (cudaHostRegister) and copies it as DMA; least-recently-used ranges are "
     "unregistered to stay under the limit. 0 turns the cache off (such copies then take the driver's pageable "
     "path after waiting for their stream)"},
    {"registration_min", "size", "1048576",
     "copies smaller than this are not cached (registration costs ~55 ms per GiB, a small pageable copy less)"},
};
const std::size_t kParamCount = sizeof kParams / sizeof kParams[0];
static_assert(plugin::declared_defaults_are_decimal(kParams), "param_u64 parses declared defaults as decimals");

xfer_status make_context(const xfer_backend_param_value *values, std::size_t count, std::unique_ptr<Context> *out) {
    std::uint64_t limit = 0;
    std::uint64_t min_bytes = 0;
    if (auto st = param_u64("pinned", kParams, kParamCount, values, count, "registration_cache", 0,
                            std::uint64_t{1} << 50, &limit)) {
        return st;
    }
    if (auto st = param_u64("pinned", kParams, kParamCount, values, count, "registration_min", 1,
                            std::uint64_t{1} << 50, &min_bytes)) {
        return st;
    }
    auto ctx = std::make_unique<PinnedContext>();
    if (limit > 0) {
        ctx->cache =
            std::make_unique<RegistrationCache>(static_cast<std::size_t>(limit), static_cast<std::size_t>(min_bytes));
        ctx->cached_ranges = &ctx->cache->range_count();
        ctx->cache_min_bytes = ctx->cache->min_bytes();
    }
    *out = std::move(ctx);
    return XFER_SUCCESS;
}

xfer_status PinnedContext::cache_pageable_copy(void *dst, const void *src, std::size_t bytes, Memory to, Memory from,
                                               bool pages_proven, cudaStream_t s, bool *taken) const noexcept {
    *taken = false;
    if (!cache) {
        return XFER_SUCCESS;
    }
    if (is_host_memory(from) && to == Memory::device) {
        return cache->copy(dst, src, bytes, XFER_TO_DEVICE, from == Memory::pinned_host, pages_proven, s, taken);
    }
    if (is_host_memory(to) && from == Memory::device) {
        return cache->copy(dst, src, bytes, XFER_TO_HOST, to == Memory::pinned_host, pages_proven, s, taken);
    }
    return XFER_SUCCESS;
}

bool PinnedContext::drop_stale_registrations(const void *ptr, std::size_t bytes, bool prove_pages) const noexcept {
    return cache && cache->drop_stale(ptr, bytes, prove_pages);
}

void PinnedContext::forget_cached_registrations(const void *ptr, std::size_t bytes) const noexcept {
    if (cache) {
        (void)cache->forget(ptr, bytes);
    }
}

void PinnedContext::cache_stats(xfer_registration_stats *out) const noexcept {
    if (cache) {
        cache->stats(out);
    }
}

xfer_status PinnedContext::close() noexcept { return cache ? cache->forget(nullptr, 0) : XFER_SUCCESS; }

} // namespace xfer::cuda::pinned

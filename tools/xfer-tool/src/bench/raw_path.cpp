// SPDX-License-Identifier: Apache-2.0
#include "bench/raw_path.hpp"

#include <chrono>
#include <cstring>

namespace xfer::tool {

RawPath::RawPath(BenchEnv::Backend &backend)
    : s_(*backend.testbed), raw_stream_(*backend.raw_stream),
      call_(s_.context().device_kind() == XFER_DEVICE_KIND_CUDA ? RawCall::cuda_memcpy_async : RawCall::host_memcpy) {}

double RawPath::timed_copy(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind,
                           const std::string &name) {
    Pieces one{{dst}, {src}, {bytes}};
    return timed_loop(one, kind, name);
}

double RawPath::timed_loop(const Pieces &p, xfer_copy_kind kind, const std::string &name) {
    std::uint64_t total = 0;
    for (std::size_t size : p.sizes) total += size;
    return time_raw(s_, call_, raw_stream_, name, "raw copy", total, [&] {
        if (cuda()) {
            s_.kernels().raw_memcpy_loop(p.dsts.data(), p.srcs.data(), p.sizes.data(), p.sizes.size(), kind,
                                         raw_stream_);
            return;
        }
        for (std::size_t i = 0; i < p.sizes.size(); ++i) std::memcpy(p.dsts[i], p.srcs[i], p.sizes[i]);
    });
}

double RawPath::timed_prefetch(const void *ptr, std::size_t bytes, xfer_direction dir, const std::string &name) {
    if (!cuda())
        throw XferError(XFER_ERROR_NOT_SUPPORTED, "raw prefetch: backend '" + s_.backend() + "' is not a CUDA one");
    return time_raw(s_, RawCall::cuda_prefetch_async, raw_stream_, name, "raw prefetch", bytes,
                    [&] { s_.kernels().raw_prefetch_async(ptr, bytes, dir, raw_stream_); });
}

double RawPath::call_ns(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind, std::size_t calls) {
    if (cuda()) return s_.kernels().raw_memcpy_call_ns(dst, src, bytes, kind, calls, raw_stream_);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < calls; ++i) std::memcpy(dst, src, bytes);
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

void RawPath::copy(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind) {
    timed_copy(dst, src, bytes, kind, "raw copy (untimed)");
}

void RawPath::clear_device(void *ptr, std::size_t bytes) {
    if (!cuda()) {
        std::memset(ptr, 0, bytes);
        return;
    }
    s_.kernels().raw_memset_async(ptr, 0, bytes, raw_stream_);
    raw_stream_.synchronize();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "workflows/raw_copy.hpp"

#include <cstring>

#include "random_data.hpp"

namespace xfer::tool {

RawCall raw_call_for(const Testbed &s) {
    if (s.no_copy()) return RawCall::none;
    if (s.context().device_kind() != XFER_DEVICE_KIND_CUDA) return RawCall::host_memcpy;
    return s.migrates() ? RawCall::cuda_prefetch_async : RawCall::cuda_memcpy_async;
}

std::string raw_call_text(RawCall call) {
    switch (call) {
    case RawCall::cuda_memcpy_async:
        return "cudaMemcpyAsync(device view <-> host view), own stream";
    case RawCall::cuda_prefetch_async:
        return "cudaMemPrefetchAsync(range, device | host location), own stream";
    case RawCall::host_memcpy:
        return "std::memcpy(device view <-> host view), calling thread";
    case RawCall::none:
        break;
    }
    return "n/a: no raw equivalent (mapped memory: nothing moves)";
}

double timed_raw_copy(Testbed &s, RawCall call, const Buffer &buf, xfer_direction dir, const Stream &raw_stream,
                      const std::string &name) {
    const bool to_device = dir == XFER_TO_DEVICE;
    void *dst = to_device ? buf.device() : buf.host();
    const void *src = to_device ? buf.host() : buf.device();
    switch (call) {
    case RawCall::host_memcpy:
        return time_raw(s, call, raw_stream, name, "raw copy", buf.bytes(),
                        [&] { std::memcpy(dst, src, buf.bytes()); });
    case RawCall::cuda_memcpy_async:
        return time_raw(s, call, raw_stream, name, "raw copy", buf.bytes(),
                        [&] { s.kernels().raw_memcpy_async(dst, src, buf.bytes(), dir, raw_stream); });
    case RawCall::cuda_prefetch_async:
        return time_raw(s, call, raw_stream, name, "raw prefetch", buf.bytes(),
                        [&] { s.kernels().raw_prefetch_async(buf.device(), buf.bytes(), dir, raw_stream); });
    case RawCall::none:
        break;
    }
    throw XferError(XFER_ERROR_NOT_SUPPORTED, "timed_raw_copy: backend '" + s.backend() + "' has no raw copy call");
}

void verify_raw_copies(Testbed &s, RawCall call, const Buffer &buf, const Stream &raw_stream, std::uint64_t seed,
                       Verifier &verifier, const std::string &what) {
    if (call != RawCall::cuda_memcpy_async && call != RawCall::host_memcpy) return;
    const std::size_t bytes = buf.bytes();
    std::memset(buf.host(), 0, bytes);
    check(xfer_copy(buf.get(), XFER_TO_DEVICE, 0, bytes), "xfer_copy(clear device view)");
    RandomData(seed).fill_bytes(buf.host(), bytes);
    timed_raw_copy(s, call, buf, XFER_TO_DEVICE, raw_stream, "raw check h2d");
    std::memset(buf.host(), 0, bytes);
    timed_raw_copy(s, call, buf, XFER_TO_HOST, raw_stream, "raw check d2h");
    verifier.bytes_from_seed(what, buf.host(), bytes, seed);
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// What the processes of the sharing tests write and expect: byte i of pattern `seed`, and the
// steps of the conversation between the exporter (the test) and its peer (share_peer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <xfer/xfer.h>

namespace xfer::test::share {

inline unsigned char pattern_byte(std::size_t i, unsigned seed) { return static_cast<unsigned char>(i * 31u + seed); }

inline void fill(unsigned char *p, std::size_t bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i) p[i] = pattern_byte(i, seed);
}

// The offset of the first byte that differs from pattern `seed`, or `bytes` when none does.
inline std::size_t first_mismatch(const unsigned char *p, std::size_t bytes, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i) {
        if (p[i] != pattern_byte(i, seed)) return i;
    }
    return bytes;
}

// The backend both processes share through (XFER_BACKEND, as the tests are run on a GPU
// machine for each CUDA backend that exports; host where it is not set).
inline const char *share_backend() {
    const char *b = std::getenv("XFER_BACKEND");
    return b != nullptr && *b != '\0' ? b : "host";
}

// A copy of `bytes` of a view read through the backend (a device view may not be host memory);
// empty when a call failed (xfer_last_error() says which).
inline std::vector<unsigned char> read_view(xfer_context ctx, const void *view, std::size_t bytes) {
    std::vector<unsigned char> out(bytes);
    xfer_stream s = nullptr;
    if (xfer_stream_create(ctx, &s) != XFER_SUCCESS) return {};
    const bool ok = xfer_memcpy_async(ctx, out.data(), view, bytes, XFER_COPY_DEFAULT, s) == XFER_SUCCESS &&
                    xfer_stream_synchronize(s) == XFER_SUCCESS;
    (void)xfer_stream_destroy(s);
    return ok ? out : std::vector<unsigned char>{};
}

constexpr std::size_t kBytes = (3u << 20) + 123; // not a multiple of the page: the layout rounds
constexpr unsigned kDeviceSeed = 11, kHostSeed = 22, kPeerSeed = 33, kAfterFreeSeed = 44;

// One byte each way between the steps.
constexpr char kImported = 'i', kFreed = 'f', kWritten = 'w';

} // namespace xfer::test::share

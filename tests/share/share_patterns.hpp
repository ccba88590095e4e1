// SPDX-License-Identifier: Apache-2.0
// What the processes of the sharing tests write and expect: byte i of pattern `seed`, and the
// steps of the conversation between the exporter (the test) and its peer (share_peer.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

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

constexpr std::size_t kBytes = (3u << 20) + 123; // not a multiple of the page: the layout rounds
constexpr unsigned kDeviceSeed = 11, kHostSeed = 22, kPeerSeed = 33, kAfterFreeSeed = 44;

// One byte each way between the steps.
constexpr char kImported = 'i', kFreed = 'f', kWritten = 'w';

} // namespace xfer::test::share

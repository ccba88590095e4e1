// SPDX-License-Identifier: Apache-2.0
#include "random_data.hpp"

#include <cstring>

namespace xfer::tool {
namespace {

// Builds the float bit pattern directly: far faster than a distribution on 2^28 elements,
// and exponents 0..9 give values spread over [1, 1024), so sqrt and sums are not trivial.
float float_from_bits(std::uint32_t r) {
    std::uint32_t exponent = 127u + (r >> 23) % 10u;
    std::uint32_t bits = (exponent << 23) | (r & 0x7fffffu);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

} // namespace

void RandomData::fill_floats(float *out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 1 < n; i += 2) {
        std::uint64_t r = next();
        out[i] = float_from_bits(static_cast<std::uint32_t>(r));
        out[i + 1] = float_from_bits(static_cast<std::uint32_t>(r >> 32));
    }
    if (i < n) out[i] = float_from_bits(static_cast<std::uint32_t>(next()));
}

void RandomData::fill_bytes(void *out, std::size_t bytes) {
    auto *p = static_cast<unsigned char *>(out);
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        std::uint64_t r = next();
        std::memcpy(p + i, &r, 8);
    }
    if (i < bytes) {
        std::uint64_t r = next();
        std::memcpy(p + i, &r, bytes - i);
    }
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream_id) {
    // splitmix64 of the pair: well-spread seeds even for neighbouring ids.
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (stream_id + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

} // namespace xfer::tool

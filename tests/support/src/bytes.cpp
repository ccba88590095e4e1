// SPDX-License-Identifier: Apache-2.0
#include "xfer_test/bytes.hpp"

#include <cstring>
#include <random>

namespace xfer::test {

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    Bytes bytes(n);
    // Eight bytes per draw (a 64 MiB buffer fills fast, sanitizers included), each mapped to
    // 1..255 so that no byte is zero.
    for (std::size_t i = 0; i < n; i += sizeof(std::uint64_t)) {
        std::uint64_t word = engine();
        for (std::size_t j = i; j < n && j < i + sizeof word; ++j, word >>= 8) {
            bytes[j] = static_cast<unsigned char>(1 + (word & 0xff) % 255);
        }
    }
    return bytes;
}

::testing::AssertionResult same_bytes(const void *expected, const void *actual, std::size_t n) {
    if (n == 0 || std::memcmp(expected, actual, n) == 0) {
        return ::testing::AssertionSuccess();
    }
    const auto *e = static_cast<const unsigned char *>(expected);
    const auto *a = static_cast<const unsigned char *>(actual);
    std::size_t first = n;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (e[i] != a[i]) {
            first = first == n ? i : first;
            ++differing;
        }
    }
    return ::testing::AssertionFailure() << differing << " of " << n << " bytes differ; first at index " << first
                                         << ": expected " << int(e[first]) << ", got " << int(a[first]);
}

::testing::AssertionResult same_bytes(const Bytes &expected, const Bytes &actual) {
    if (expected.size() != actual.size()) {
        return ::testing::AssertionFailure()
               << "sizes differ: expected " << expected.size() << " bytes, got " << actual.size();
    }
    return same_bytes(expected.data(), actual.data(), expected.size());
}

} // namespace xfer::test

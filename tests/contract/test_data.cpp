// SPDX-License-Identifier: Apache-2.0
#include "test_data.hpp"

#include <cstring>
#include <random>

namespace xfer_contract {

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    Bytes bytes(n);
    std::size_t i = 0;
    for (; i + sizeof(std::uint64_t) <= n; i += sizeof(std::uint64_t)) {
        const std::uint64_t word = engine();
        std::memcpy(&bytes[i], &word, sizeof word);
    }
    if (i < n) {
        const std::uint64_t word = engine();
        std::memcpy(&bytes[i], &word, n - i);
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
        return ::testing::AssertionFailure() << "sizes differ: expected " << expected.size() << " bytes, got "
                                             << actual.size();
    }
    return same_bytes(expected.data(), actual.data(), expected.size());
}

}  // namespace xfer_contract

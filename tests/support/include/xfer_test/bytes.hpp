// SPDX-License-Identifier: Apache-2.0
// Test data: random bytes and byte-for-byte comparison with a useful failure message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace xfer::test {

using Bytes = std::vector<unsigned char>;

// `n` pseudo-random bytes (std::mt19937_64), none of them zero: random data, never zeros, so
// a copy that moved nothing, moved the wrong range or zero-filled its destination cannot
// pass by accident. The same seed gives the same bytes.
Bytes random_bytes(std::size_t n, std::uint64_t seed);

// Compares `n` bytes; on a mismatch reports the first differing index, both values and how
// many bytes differ (printing a 64 MiB vector would help nobody).
::testing::AssertionResult same_bytes(const void *expected, const void *actual, std::size_t n);
::testing::AssertionResult same_bytes(const Bytes &expected, const Bytes &actual);

} // namespace xfer::test

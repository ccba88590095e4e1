// SPDX-License-Identifier: Apache-2.0
// Verification of results, the random data it regenerates, and the corruption test hook.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "random_data.hpp"
#include "verify.hpp"

using namespace xfer::tool;

namespace {

// Unsets the hook for tests that must not see it, whatever the environment says.
struct HookOff {
    HookOff() { unsetenv("XFER_TOOL_CORRUPT"); }
};

} // namespace

TEST(RandomData, FloatsAreFiniteNonZeroAndReproducible) {
    std::vector<float> a(10001), b(10001);
    RandomData(42).fill_floats(a.data(), a.size());
    RandomData(42).fill_floats(b.data(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    std::size_t distinct_exponents = 0;
    std::vector<bool> seen(10, false);
    for (float f : a) {
        ASSERT_TRUE(std::isfinite(f));
        ASSERT_GE(f, 1.0f);
        ASSERT_LT(f, 1024.0f);
        int e = static_cast<int>(std::floor(std::log2(f)));
        if (!seen[e]) {
            seen[e] = true;
            ++distinct_exponents;
        }
    }
    EXPECT_EQ(distinct_exponents, 10u);
    std::vector<float> c(10001);
    RandomData(43).fill_floats(c.data(), c.size());
    EXPECT_NE(std::memcmp(a.data(), c.data(), a.size() * sizeof(float)), 0);
}

TEST(RandomData, DerivedSeedsDiffer) {
    EXPECT_NE(derive_seed(1, 0), derive_seed(1, 1));
    EXPECT_NE(derive_seed(1, 0), derive_seed(2, 0));
    EXPECT_EQ(derive_seed(7, 3), derive_seed(7, 3));
}

TEST(Verifier, EqualFloatsPass) {
    HookOff off;
    std::vector<float> expected(1000);
    RandomData(1).fill_floats(expected.data(), expected.size());
    std::vector<float> got = expected;
    Verifier v;
    v.floats("result", got.data(), expected.data(), got.size());
    EXPECT_EQ(v.result().state, Verification::State::passed);
    EXPECT_EQ(v.result().checked, 1000u);
    EXPECT_NE(v.result().detail.find("1000 elements match (result)"), std::string::npos) << v.result().detail;
}

TEST(Verifier, ReportsFirstMismatchWithIndexAndValues) {
    HookOff off;
    std::vector<float> expected(100, 2.0f), got(100, 2.0f);
    got[37] = 3.5f;
    got[90] = 1.0f;
    Verifier v;
    v.floats("sqrt result", got.data(), expected.data(), got.size());
    ASSERT_EQ(v.result().state, Verification::State::failed);
    EXPECT_EQ(v.result().detail,
              "sqrt result: first mismatch at index 37: expected 2, got 3.5 (2 of 100 elements differ)");
}

TEST(Verifier, FirstFailureIsKeptOverLaterChecks) {
    HookOff off;
    std::vector<float> expected(10, 1.0f), bad(10, 1.0f), good(10, 1.0f);
    bad[4] = 9.0f;
    Verifier v;
    v.floats("first", bad.data(), expected.data(), 10);
    v.floats("second", good.data(), expected.data(), 10);
    EXPECT_TRUE(v.failed());
    EXPECT_NE(v.result().detail.find("first: first mismatch at index 4"), std::string::npos);
    EXPECT_EQ(v.result().checked, 20u);
}

TEST(Verifier, GeneratedReferences) {
    HookOff off;
    std::vector<float> got(64);
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = static_cast<float>(i) * 2.0f;
    Verifier v;
    v.floats_generated("doubled", got.data(), got.size(), [](std::size_t i) { return static_cast<float>(i) * 2.0f; });
    EXPECT_EQ(v.result().state, Verification::State::passed);
}

TEST(Verifier, BytesFromSeedMatchAcrossChunkBoundaries) {
    HookOff off;
    // Not a multiple of the 1 MiB chunk nor of 8: exercises the partial last draw.
    const std::size_t n = (3u << 20) + 5;
    std::vector<unsigned char> data(n);
    RandomData(99).fill_bytes(data.data(), n);
    Verifier ok;
    ok.bytes_from_seed("buffer", data.data(), n, 99);
    EXPECT_EQ(ok.result().state, Verification::State::passed) << ok.result().detail;

    data[(2u << 20) + 3] ^= 0x10;
    Verifier bad;
    bad.bytes_from_seed("buffer", data.data(), n, 99);
    ASSERT_TRUE(bad.failed());
    EXPECT_NE(bad.result().detail.find("first mismatch at byte 2097155"), std::string::npos) << bad.result().detail;
    EXPECT_NE(bad.result().detail.find("(1 of 3145733 bytes differ)"), std::string::npos) << bad.result().detail;
}

TEST(Verifier, BytesCompare) {
    HookOff off;
    std::vector<unsigned char> a(300, 0xab), b(300, 0xab);
    Verifier ok;
    ok.bytes("copy", a.data(), b.data(), a.size());
    EXPECT_EQ(ok.result().state, Verification::State::passed);
    b[299] = 0x01;
    Verifier bad;
    bad.bytes("copy", b.data(), a.data(), a.size());
    ASSERT_TRUE(bad.failed());
    EXPECT_EQ(bad.result().detail, "copy: first mismatch at byte 299: expected 0xab, got 0x01 (1 of 300 bytes differ)");
}

TEST(CorruptionHook, FlipsOneByteOfTheResultWhenSet) {
    std::vector<float> expected(100, 4.0f), got(100, 4.0f);
    setenv("XFER_TOOL_CORRUPT", "1", 1);
    Verifier v;
    v.floats("result", got.data(), expected.data(), got.size());
    unsetenv("XFER_TOOL_CORRUPT");
    ASSERT_TRUE(v.failed());
    // Byte 200 = the low byte of element 50: still finite, no longer equal.
    EXPECT_NE(v.result().detail.find("first mismatch at index 50"), std::string::npos) << v.result().detail;
    EXPECT_NE(v.result().detail.find("(1 of 100 elements differ)"), std::string::npos) << v.result().detail;
    EXPECT_TRUE(std::isfinite(got[50]));
}

TEST(CorruptionHook, ZeroMeansOff) {
    setenv("XFER_TOOL_CORRUPT", "0", 1);
    EXPECT_FALSE(corruption_hook_enabled());
    std::vector<float> a(8, 1.0f), b(8, 1.0f);
    Verifier v;
    v.floats("result", a.data(), b.data(), a.size());
    unsetenv("XFER_TOOL_CORRUPT");
    EXPECT_EQ(v.result().state, Verification::State::passed);
}

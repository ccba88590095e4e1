// SPDX-License-Identifier: Apache-2.0
// Configuration value parsing: sizes with units, ints, bools, canonical forms.
#include <gtest/gtest.h>

#include "xfer_config/value_parse.hpp"

using xfer::core::normalize_value;
using xfer::core::parse_bool;
using xfer::core::parse_int;
using xfer::core::parse_size;

namespace {

std::uint64_t size_ok(const char *text) {
    std::string why;
    auto v = parse_size(text, &why);
    EXPECT_TRUE(v.has_value()) << text << ": " << why;
    return v.value_or(0);
}

std::string size_error(const char *text) {
    std::string why;
    auto v = parse_size(text, &why);
    EXPECT_FALSE(v.has_value()) << text << " parsed as " << v.value_or(0);
    return why;
}

TEST(SizeParse, PlainBytes) {
    EXPECT_EQ(size_ok("0"), 0u);
    EXPECT_EQ(size_ok("4096"), 4096u);
    EXPECT_EQ(size_ok("  123  "), 123u);
    EXPECT_EQ(size_ok("17B"), 17u);
    EXPECT_EQ(size_ok("18446744073709551615"), UINT64_MAX);
}

TEST(SizeParse, BinaryUnitsArePowersOf1024) {
    EXPECT_EQ(size_ok("1KiB"), 1024u);
    EXPECT_EQ(size_ok("8MiB"), 8u * 1024 * 1024);
    EXPECT_EQ(size_ok("3GiB"), 3ull << 30);
    EXPECT_EQ(size_ok("2TiB"), 2ull << 40);
    EXPECT_EQ(size_ok("8 MiB"), 8u * 1024 * 1024);
}

TEST(SizeParse, DecimalUnitsArePowersOf1000) {
    EXPECT_EQ(size_ok("1KB"), 1000u);
    EXPECT_EQ(size_ok("8MB"), 8000000u);
    EXPECT_EQ(size_ok("5GB"), 5000000000ull);
    EXPECT_EQ(size_ok("2TB"), 2000000000000ull);
}

TEST(SizeParse, RejectsGarbageWithAReason) {
    EXPECT_NE(size_error("").find("whole number"), std::string::npos);
    EXPECT_NE(size_error("abc").find("whole number"), std::string::npos);
    EXPECT_NE(size_error("-1").find("whole number"), std::string::npos);
    EXPECT_NE(size_error("8XB").find("unknown size unit 'XB'"), std::string::npos);
    EXPECT_NE(size_error("8mib").find("unknown size unit 'mib'"), std::string::npos);
    EXPECT_NE(size_error("8MiB extra").find("unknown size unit"), std::string::npos);
    EXPECT_NE(size_error("1.5GiB").find("fractional"), std::string::npos);
}

TEST(SizeParse, RejectsOverflow) {
    EXPECT_NE(size_error("18446744073709551616").find("too large"), std::string::npos);
    EXPECT_NE(size_error("16777216TiB").find("overflows"), std::string::npos); // 2^24 * 2^40 = 2^64
    EXPECT_EQ(size_ok("16777215TiB"), 16777215ull << 40);
}

TEST(IntParse, AcceptsWholeNumbersInRange) {
    std::string why;
    EXPECT_EQ(parse_int("0", &why).value_or(-99), 0);
    EXPECT_EQ(parse_int(" 42 ", &why).value_or(-99), 42);
    EXPECT_EQ(parse_int("-7", &why).value_or(-99), -7);
    EXPECT_EQ(parse_int("2147483647", &why).value_or(-99), 2147483647);
}

TEST(IntParse, RejectsGarbageAndOverflow) {
    std::string why;
    EXPECT_FALSE(parse_int("abc", &why));
    EXPECT_EQ(why, "not a whole number");
    EXPECT_FALSE(parse_int("", &why));
    EXPECT_FALSE(parse_int("1.0", &why));
    EXPECT_FALSE(parse_int("3x", &why));
    EXPECT_FALSE(parse_int("-", &why));
    EXPECT_FALSE(parse_int("2147483648", &why));
    EXPECT_EQ(why, "out of the range of int");
}

TEST(BoolParse, AcceptsTheUsualWords) {
    std::string why;
    for (const char *t : {"true", "TRUE", "1", "yes", "On"})
        EXPECT_EQ(parse_bool(t, &why), std::optional<bool>(true)) << t;
    for (const char *f : {"false", "0", "no", "off", "OFF"})
        EXPECT_EQ(parse_bool(f, &why), std::optional<bool>(false)) << f;
    EXPECT_FALSE(parse_bool("maybe", &why));
    EXPECT_NE(why.find("not a boolean"), std::string::npos);
}

TEST(NormalizeValue, GivesTheCanonicalFormBackendsReceive) {
    std::string why;
    EXPECT_EQ(normalize_value("size", "8MiB", &why).value_or("?"), "8388608");
    EXPECT_EQ(normalize_value("bool", "yes", &why).value_or("?"), "1");
    EXPECT_EQ(normalize_value("bool", "off", &why).value_or("?"), "0");
    EXPECT_EQ(normalize_value("int", " 12 ", &why).value_or("?"), "12");
    EXPECT_EQ(normalize_value("string", "any text", &why).value_or("?"), "any text");
    EXPECT_FALSE(normalize_value("size", "8XB", &why));
    EXPECT_FALSE(normalize_value("float", "1", &why));
    EXPECT_NE(why.find("unknown parameter type 'float'"), std::string::npos);
}

} // namespace

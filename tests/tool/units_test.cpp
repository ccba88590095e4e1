// SPDX-License-Identifier: Apache-2.0
// Size parsing and printing, rates and number formatting of xfer-tool's reports.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "units.hpp"

using namespace xfer::tool;

TEST(ParseSize, BinaryAndDecimalUnits) {
    EXPECT_EQ(parse_size("4096"), 4096u);
    EXPECT_EQ(parse_size("512B"), 512u);
    EXPECT_EQ(parse_size("4KiB"), 4096u);
    EXPECT_EQ(parse_size("256MiB"), 268435456u);
    EXPECT_EQ(parse_size("1GiB"), 1073741824u);
    EXPECT_EQ(parse_size("4 KiB"), 4096u);
    EXPECT_EQ(parse_size("1KB"), 1000u);
    EXPECT_EQ(parse_size("1MB"), 1000000u);
    EXPECT_EQ(parse_size("2GB"), 2000000000u);
}

TEST(ParseSize, IsTheLibraryGrammar) {
    // A configuration file refuses fractions and lower-case units; so does the tool.
    EXPECT_THROW(parse_size("1.5MiB"), std::invalid_argument);
    EXPECT_THROW(parse_size("1mib"), std::invalid_argument);
    EXPECT_EQ(parse_size("1536MiB"), 1536ull << 20);
}

TEST(ParseSize, RejectsWhatIsNotASize) {
    EXPECT_THROW(parse_size(""), std::invalid_argument);
    EXPECT_THROW(parse_size("MiB"), std::invalid_argument);
    EXPECT_THROW(parse_size("12XB"), std::invalid_argument);
    EXPECT_THROW(parse_size("0"), std::invalid_argument);
    EXPECT_THROW(parse_size("0.3B"), std::invalid_argument);
    EXPECT_THROW(parse_size("99999999999999999999"), std::invalid_argument);
    EXPECT_THROW(parse_size("20000000000GiB"), std::invalid_argument);
    try {
        parse_size("12XB");
        FAIL() << "no exception";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("unknown size unit 'XB'"), std::string::npos) << e.what();
    }
}

TEST(ParseSizeList, ListsAndRanges) {
    EXPECT_EQ(parse_size_list("1KiB,64KiB,1MiB"), (std::vector<std::uint64_t>{1024, 65536, 1048576}));
    EXPECT_EQ(parse_size_list("1KiB:16KiB"), (std::vector<std::uint64_t>{1024, 4096, 16384}));
    EXPECT_EQ(parse_size_list("1KiB:8KiB:2"), (std::vector<std::uint64_t>{1024, 2048, 4096, 8192}));
    EXPECT_EQ(parse_size_list("1KiB:10KiB"), (std::vector<std::uint64_t>{1024, 4096}));
    EXPECT_THROW(parse_size_list("1KiB,,4KiB"), std::invalid_argument);
    EXPECT_THROW(parse_size_list("4KiB:1KiB"), std::invalid_argument);
    EXPECT_THROW(parse_size_list("1KiB:4KiB:1"), std::invalid_argument);
    EXPECT_THROW(parse_size_list("1KiB:4KiB:2:2"), std::invalid_argument);
}

TEST(ParseSizeList, LinearAndExplicitGeometricRanges) {
    EXPECT_EQ(parse_size_list("1MiB:4MiB:+1MiB"), (std::vector<std::uint64_t>{1u << 20, 2u << 20, 3u << 20, 4u << 20}));
    EXPECT_EQ(parse_size_list("1KiB:3500B:+1KiB"), (std::vector<std::uint64_t>{1024, 2048, 3072}));
    EXPECT_EQ(parse_size_list("1KiB:8KiB:x2"), (std::vector<std::uint64_t>{1024, 2048, 4096, 8192}));
    EXPECT_THROW(parse_size_list("1KiB:8KiB:+0"), std::invalid_argument);
    EXPECT_THROW(parse_size_list("1KiB:8KiB:+lots"), std::invalid_argument);
    EXPECT_THROW(parse_size_list("1KiB:8KiB:x1"), std::invalid_argument);
}

TEST(ParseSizeList, RefusesMoreSizesThanTheLimitBeforeAllocating) {
    EXPECT_EQ(kMaxSizeListPoints, 10000u);
    EXPECT_EQ(parse_size_list("1:10000:+1").size(), kMaxSizeListPoints);
    EXPECT_EQ(parse_size_list("1:10000:+1").back(), 10000u);
    try {
        parse_size_list("1:99999TiB:+1"); // 99999 * 2^40 sizes: would grow until memory runs out
        FAIL() << "no exception";
    } catch (const std::invalid_argument &e) {
        EXPECT_STREQ(e.what(), "range '1:99999TiB:+1' has 109950063265972224 sizes, more than the limit of 10000 "
                               "(use a larger step or a geometric range FROM:TO:FACTOR)");
    }
    try {
        parse_size_list("1:10001:+1");
        FAIL() << "no exception";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("has 10001 sizes, more than the limit of 10000"), std::string::npos)
            << e.what();
    }
    // From 1 byte to 2^64 - 1 in steps of 1: the count itself must not overflow.
    EXPECT_THROW(parse_size_list("1:18446744073709551615:+1"), std::invalid_argument);
    // A geometric range is at most 64 sizes whatever its ends.
    EXPECT_EQ(parse_size_list("1:18446744073709551615:2").size(), 64u);

    std::string list = "1KiB";
    for (std::size_t i = 1; i < kMaxSizeListPoints; ++i) list += ",1KiB";
    EXPECT_EQ(parse_size_list(list).size(), kMaxSizeListPoints);
    try {
        parse_size_list(list + ",1KiB");
        FAIL() << "no exception";
    } catch (const std::invalid_argument &e) {
        // The message shows the start of the list, not all of it.
        EXPECT_STREQ(e.what(), "list '1KiB,1KiB,1KiB,1KiB,1KiB,1KiB,1KiB,1KiB,...' has 10001 sizes, more than the "
                               "limit of 10000 (measure fewer sizes)");
    }
}

TEST(ParseSizeList, DefaultSweepIsOneKiBToOneGiBByFour) {
    const auto sizes = default_sweep_sizes();
    ASSERT_EQ(sizes.size(), 11u);
    EXPECT_EQ(sizes.front(), 1024u);
    EXPECT_EQ(sizes.back(), 1073741824u);
    for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_EQ(sizes[i], sizes[i - 1] * 4);
}

TEST(FormatSize, BinaryUnits) {
    EXPECT_EQ(format_size(1), "1 B");
    EXPECT_EQ(format_size(1000), "1000 B");
    EXPECT_EQ(format_size(1024), "1 KiB");
    EXPECT_EQ(format_size(4096), "4 KiB");
    EXPECT_EQ(format_size(1572864), "1.5 MiB");
    EXPECT_EQ(format_size(268435456), "256 MiB");
    EXPECT_EQ(format_size(1073741824), "1 GiB");
    EXPECT_EQ(format_size(1000000000), "953.67 MiB");
}

TEST(Rates, GigabytesPerSecondArePowersOfTen) {
    EXPECT_DOUBLE_EQ(gb_per_s(1000000000, 1000.0), 1.0);
    EXPECT_DOUBLE_EQ(gb_per_s(1073741824, 1000.0), 1.073741824);
    EXPECT_DOUBLE_EQ(gb_per_s(500000000, 10.0), 50.0);
}

TEST(FormatValue, FourSignificantDigits) {
    EXPECT_EQ(format_value(0.0), "0");
    EXPECT_EQ(format_value(12.345), "12.35");
    EXPECT_EQ(format_value(0.012344), "0.01234");
    EXPECT_EQ(format_value(12345.6), "12346");
    EXPECT_EQ(format_value(1.0), "1.000");
    EXPECT_EQ(format_value(-2.5), "-2.500");
}

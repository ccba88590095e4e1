// SPDX-License-Identifier: Apache-2.0
// The INI parser: sections, comments, values, and errors that name the line.
#include <sstream>

#include <gtest/gtest.h>

#include "xfer_config/config_file.hpp"
#include "xfer_config/status_error.hpp"

using xfer::core::ConfigFile;
using xfer::core::Error;
using xfer::core::parse_config;

namespace {

ConfigFile parse(const std::string &text) {
    std::istringstream in(text);
    return parse_config(in, "test.conf");
}

// The message of the XFER_ERROR_CONFIG that parsing `text` must raise.
std::string parse_error(const std::string &text) {
    try {
        parse(text);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_CONFIG);
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return {};
}

TEST(ConfigFile, ReadsTopLevelKeysAndSectionsWithLineNumbers) {
    ConfigFile f = parse("# a comment\n"
                         "backend = pinned   # inline comment\n"
                         "device=1\n"
                         "\n"
                         "[pageable]\n"
                         "  staging_threads = 8\n"
                         "chunk_size = 8MiB\n"
                         "[host]\n"
                         "label =\n");
    ASSERT_EQ(f.entries.size(), 5u);
    EXPECT_EQ(f.path, "test.conf");
    struct Expected {
        const char *section, *key, *value;
        int line;
    } expected[] = {
        {"", "backend", "pinned", 2},          {"", "device", "1", 3},   {"pageable", "staging_threads", "8", 6},
        {"pageable", "chunk_size", "8MiB", 7}, {"host", "label", "", 9},
    };
    for (std::size_t i = 0; i < f.entries.size(); ++i) {
        EXPECT_EQ(f.entries[i].section, expected[i].section) << i;
        EXPECT_EQ(f.entries[i].key, expected[i].key) << i;
        EXPECT_EQ(f.entries[i].value, expected[i].value) << i;
        EXPECT_EQ(f.entries[i].line, expected[i].line) << i;
    }
}

TEST(ConfigFile, EmptyAndCommentOnlyTextHasNoEntries) {
    EXPECT_TRUE(parse("").entries.empty());
    EXPECT_TRUE(parse("# nothing\n   \n\t# still nothing\n").entries.empty());
}

TEST(ConfigFile, WindowsLineEndingsAreAccepted) {
    ConfigFile f = parse("backend = host\r\n[host]\r\nthreads = 2\r\n");
    ASSERT_EQ(f.entries.size(), 2u);
    EXPECT_EQ(f.entries[0].value, "host");
    EXPECT_EQ(f.entries[1].section, "host");
    EXPECT_EQ(f.entries[1].value, "2");
}

TEST(ConfigFile, MalformedLineNamesTheLine) {
    std::string m = parse_error("backend = host\n\nthis is not a key value pair\n");
    EXPECT_NE(m.find("test.conf:3"), std::string::npos) << m;
    EXPECT_NE(m.find("this is not a key value pair"), std::string::npos) << m;
}

TEST(ConfigFile, MalformedSectionHeaderNamesTheLine) {
    std::string m = parse_error("[pageable\nx = 1\n");
    EXPECT_NE(m.find("test.conf:1"), std::string::npos) << m;
    EXPECT_NE(m.find("section header"), std::string::npos) << m;
    EXPECT_NE(parse_error("device = 0\n[ host ]\n").find("test.conf:2"), std::string::npos);
    EXPECT_NE(parse_error("[]\n").find("test.conf:1"), std::string::npos);
}

TEST(ConfigFile, EmptyOrOddKeyNamesTheLine) {
    EXPECT_NE(parse_error("device = 0\n= 5\n").find("test.conf:2"), std::string::npos);
    EXPECT_NE(parse_error("chunk size = 5\n").find("test.conf:1"), std::string::npos);
}

TEST(ConfigFile, KeySetTwiceNamesBothLines) {
    std::string m = parse_error("[host]\nthreads = 1\n\nthreads = 2\n");
    EXPECT_NE(m.find("test.conf:4"), std::string::npos) << m;
    EXPECT_NE(m.find("host.threads"), std::string::npos) << m;
    EXPECT_NE(m.find("line 2"), std::string::npos) << m;
}

TEST(ConfigFile, SameKeyInTwoSectionsIsFine) {
    ConfigFile f = parse("[host]\nthreads = 1\n[pageable]\nthreads = 2\n");
    ASSERT_EQ(f.entries.size(), 2u);
    EXPECT_EQ(f.entries[1].section, "pageable");
    EXPECT_EQ(f.entries[1].value, "2");
}

TEST(ConfigFile, MissingFileIsAConfigErrorNamingIt) {
    try {
        xfer::core::read_config_file("/nonexistent/xfer.conf");
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_CONFIG);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/xfer.conf"), std::string::npos) << e.what();
    }
}

} // namespace

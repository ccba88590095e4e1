// SPDX-License-Identifier: Apache-2.0
// bandwidth's side-by-side comparison with the raw call: the ratio figures, their rows in the
// run and compare tables, and the host backend's raw copy (std::memcpy between the views).
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "compare.hpp"
#include "random_data.hpp"
#include "report/report.hpp"
#include "side_by_side.hpp"
#include "workflows/raw_copy.hpp"

using namespace xfer::tool;

TEST(SpeedRatios, PairsRawTimeOverXferTimeAndSkipsUntimedPairs) {
    // > 1 means xfer was faster: raw took 2 ms where xfer took 1 ms.
    EXPECT_EQ(speed_ratios({1.0, 2.0, 4.0}, {2.0, 2.0, 1.0}), (std::vector<double>{2.0, 1.0, 0.25}));
    // A 0 ms sample (below the timer's resolution) has no finite ratio, on either side.
    EXPECT_EQ(speed_ratios({0.0, 1.0, 2.0}, {1.0, 0.0, 3.0}), (std::vector<double>{1.5}));
    EXPECT_TRUE(speed_ratios({}, {}).empty());
    EXPECT_THROW(speed_ratios({1.0, 2.0}, {1.0}), std::invalid_argument);
}

TEST(RatioFigure, MinMedianMaxOfThePairsNotRatioOfMedians) {
    // Medians 2 and 2 would give 1.0; the pairs say xfer was 2x, 0.5x and 1.25x as fast.
    Figure f = ratio_figure("h2d", 4096, {1.0, 4.0, 2.0}, {2.0, 2.0, 2.5}, "cudaMemcpyAsync");
    EXPECT_EQ(f.name, "h2d xfer / raw");
    EXPECT_EQ(f.unit, "x");
    EXPECT_EQ(f.bytes, 4096u);
    ASSERT_TRUE(f.stats);
    EXPECT_DOUBLE_EQ(f.stats->min, 0.5);
    EXPECT_DOUBLE_EQ(f.stats->median, 1.25);
    EXPECT_DOUBLE_EQ(f.stats->max, 2.0);
    EXPECT_EQ(f.stats->samples, 3u);
    EXPECT_NE(f.note.find("> 1: xfer faster"), std::string::npos) << f.note;
    EXPECT_NE(f.note.find("vs cudaMemcpyAsync"), std::string::npos) << f.note;

    Figure untimed = ratio_figure("d2h", 1024, {0.0, 0.0}, {1.0, 1.0}, "std::memcpy");
    EXPECT_EQ(untimed.name, "d2h xfer / raw");
    EXPECT_FALSE(untimed.stats);
    EXPECT_EQ(untimed.note, "too short for the event timer");
}

TEST(SideBySideFigures, RawRateAndRatio) {
    // 10^6 bytes in 1 ms = 1 GB/s; in 0.5 ms = 2 GB/s.
    auto f = side_by_side_figures("d2h", 1000000, {1.0, 1.0, 1.0}, std::vector<double>{0.5, 1.0, 2.0}, "std::memcpy");
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].name, "raw d2h");
    EXPECT_EQ(f[0].unit, "GB/s");
    EXPECT_EQ(f[0].bytes, 1000000u);
    ASSERT_TRUE(f[0].stats);
    EXPECT_DOUBLE_EQ(f[0].stats->min, 0.5);
    EXPECT_DOUBLE_EQ(f[0].stats->median, 1.0);
    EXPECT_DOUBLE_EQ(f[0].stats->max, 2.0);
    EXPECT_EQ(f[0].note, "raw: std::memcpy");
    EXPECT_EQ(f[1].name, "d2h xfer / raw");
    ASSERT_TRUE(f[1].stats);
    EXPECT_DOUBLE_EQ(f[1].stats->min, 0.5);
    EXPECT_DOUBLE_EQ(f[1].stats->median, 1.0);
    EXPECT_DOUBLE_EQ(f[1].stats->max, 2.0);
}

TEST(SideBySideFigures, NoRawEquivalentIsNotApplicable) {
    const std::string why = raw_call_text(RawCall::none);
    EXPECT_NE(why.find("n/a"), std::string::npos) << why;
    auto f = side_by_side_figures("h2d", 4096, {0.01, 0.01}, std::nullopt, why);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].name, "raw h2d");
    EXPECT_EQ(f[0].unit, "GB/s");
    EXPECT_FALSE(f[0].stats);
    EXPECT_EQ(f[0].note, why);
    EXPECT_EQ(f[1].name, "h2d xfer / raw");
    EXPECT_EQ(f[1].unit, "x");
    EXPECT_FALSE(f[1].stats);
    EXPECT_EQ(f[1].bytes, 4096u);
}

namespace {

// A bandwidth result over two sizes with the side-by-side figures; zerocopy has no raw call.
WorkflowResult bandwidth(const std::string &backend, double ratio_small, double ratio_large) {
    WorkflowResult r;
    r.workflow = "bandwidth";
    r.backend = backend;
    r.device.kind = "cuda";
    r.verification.state = Verification::State::passed;
    const bool none = backend == "zerocopy";
    for (std::uint64_t bytes : {1024u, 1048576u}) {
        const double ratio = bytes == 1024 ? ratio_small : ratio_large;
        r.figures.push_back(Figure{"h2d", "GB/s", bytes, Stats{10, 20, 30, 3}, ""});
        r.figures.push_back(Figure{"h2d", "ms", bytes, Stats{0.1, 0.2, 0.3, 3}, ""});
        r.figures.push_back(none ? Figure{"raw h2d", "GB/s", bytes, std::nullopt, "n/a"}
                                 : Figure{"raw h2d", "GB/s", bytes, Stats{11, 21, 31, 3}, "raw"});
        r.figures.push_back(none ? Figure{"h2d xfer / raw", "x", bytes, std::nullopt, "n/a"}
                                 : Figure{"h2d xfer / raw", "x", bytes, Stats{ratio, ratio, ratio, 3}, ""});
    }
    return r;
}

std::vector<std::string> lines_with(const std::string &text, const std::string &needle) {
    std::vector<std::string> found;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (line.find(needle) != std::string::npos) found.push_back(line);
    return found;
}

} // namespace

TEST(SideBySideRows, CompareKeepsTheLargestSizesRatioAndRawRate) {
    Report report;
    report.results = {bandwidth("pinned", 0.75, 0.98), bandwidth("zerocopy", 0, 0)};
    std::ostringstream out;
    write_comparison(out, report);
    const std::string text = out.str();
    auto ratio_rows = lines_with(text, "h2d xfer / raw");
    ASSERT_EQ(ratio_rows.size(), 1u) << text;
    EXPECT_NE(ratio_rows[0].find("bandwidth  h2d xfer / raw  1 MiB  x     0.9800       n/a"), std::string::npos)
        << text;
    auto raw_rows = lines_with(text, "raw h2d");
    ASSERT_EQ(raw_rows.size(), 1u) << text;
    EXPECT_NE(raw_rows[0].find("bandwidth  raw h2d         1 MiB  GB/s   21.00       n/a"), std::string::npos) << text;
    // The xfer rows keep their rule: GB/s at the largest size, time at the smallest.
    EXPECT_EQ(lines_with(text, "bandwidth  h2d             1 MiB  GB/s").size(), 1u) << text;
    EXPECT_EQ(lines_with(text, "bandwidth  h2d             1 KiB  ms").size(), 1u) << text;
}

TEST(SideBySideRows, RunTableShowsRawRateAndRatioPerSize) {
    Report report;
    report.tool_version = report.library_version = "1.0.0";
    report.results = {bandwidth("pinned", 0.75, 0.98), bandwidth("zerocopy", 0, 0)};
    std::ostringstream out;
    write_table(out, report, TableStyle::long_form);
    const std::string text = out.str();
    EXPECT_NE(text.find("x = ratio"), std::string::npos);
    EXPECT_NE(text.find("raw h2d         1 KiB  GB/s   11.00   21.00   31.00   n/a     n/a  raw"), std::string::npos)
        << text;
    EXPECT_NE(text.find("h2d xfer / raw  1 KiB  x     0.7500  0.7500  0.7500"), std::string::npos) << text;
    EXPECT_NE(text.find("h2d xfer / raw  1 MiB  x     0.9800  0.9800  0.9800"), std::string::npos) << text;
    EXPECT_NE(text.find("h2d xfer / raw  1 MiB  x          -       -       -"), std::string::npos) << text;
}

TEST(SideBySideRows, CompactTablePutsRawAndRatioBesideXfer) {
    Report report;
    report.results = {bandwidth("pinned", 0.75, 0.98), bandwidth("zerocopy", 0, 0)};
    std::ostringstream out;
    write_table(out, report);
    const std::string text = out.str();
    EXPECT_NE(text.find("    size  h2d GB/s  raw h2d  h2d xfer/raw\n"
                        "   1 KiB     20.00    21.00        0.7500\n"
                        "   1 MiB     20.00    21.00        0.9800\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("   1 MiB     20.00      n/a           n/a\n   note raw h2d, h2d xfer/raw: n/a\n"),
              std::string::npos)
        << text;
}

TEST(RawCopy, HostBackendCopiesBetweenTheViewsWithMemcpy) {
    Testbed s("host", 0, nullptr);
    ASSERT_EQ(raw_call_for(s), RawCall::host_memcpy);
    EXPECT_NE(raw_call_text(RawCall::host_memcpy).find("std::memcpy"), std::string::npos);
    Stream raw_stream(s.context());
    const std::size_t bytes = 64 * 1024 + 3;
    Buffer buf(s.context(), bytes);
    ASSERT_NE(buf.host(), buf.device()); // two views: a raw copy moves bytes

    RandomData(7).fill_bytes(buf.host(), bytes);
    std::memset(buf.device(), 0, bytes);
    const double up_ms = timed_raw_copy(s, RawCall::host_memcpy, buf, XFER_TO_DEVICE, raw_stream, "raw h2d");
    EXPECT_GE(up_ms, 0.0);
    EXPECT_EQ(std::memcmp(buf.host(), buf.device(), bytes), 0);

    RandomData(8).fill_bytes(buf.device(), bytes);
    timed_raw_copy(s, RawCall::host_memcpy, buf, XFER_TO_HOST, raw_stream, "raw d2h");
    std::vector<unsigned char> expected(bytes);
    RandomData(8).fill_bytes(expected.data(), bytes);
    EXPECT_EQ(std::memcmp(buf.host(), expected.data(), bytes), 0);

    Verifier verifier;
    verify_raw_copies(s, RawCall::host_memcpy, buf, raw_stream, 9, verifier, "raw check");
    EXPECT_EQ(verifier.result().state, Verification::State::passed) << verifier.result().detail;
    EXPECT_EQ(verifier.result().checked, bytes);
    RandomData(9).fill_bytes(expected.data(), bytes);
    EXPECT_EQ(std::memcmp(buf.device(), expected.data(), bytes), 0); // both views hold the seed's bytes

    EXPECT_THROW(timed_raw_copy(s, RawCall::none, buf, XFER_TO_HOST, raw_stream, "none"), XferError);
}

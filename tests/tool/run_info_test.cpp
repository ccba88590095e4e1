// SPDX-License-Identifier: Apache-2.0
// Run metadata, the verdict line, the streamed table, the progress estimate and `diff`.
#include <sstream>

#include <gtest/gtest.h>

#include "diff.hpp"
#include "progress.hpp"
#include "report/report.hpp"
#include "run_info.hpp"

using namespace xfer::tool;

namespace {

WorkflowResult result(const std::string &workflow, double median, double stddev, bool passed = true) {
    WorkflowResult r;
    r.workflow = workflow;
    r.backend = "host";
    r.device.name = "host (emulated)";
    r.device.kind = "host";
    Stats s = summarize({median - stddev, median, median + stddev});
    r.figures.push_back(Figure{"h2d", "GB/s", 1024, s, ""});
    r.verification.state = passed ? Verification::State::passed : Verification::State::failed;
    r.verification.detail = passed ? "ok" : "first mismatch at 3";
    return r;
}

} // namespace

TEST(RunInfo, ShellQuotedCommandLine) {
    EXPECT_EQ(shell_command_line({"xfer-tool", "run", "all", "--sizes", "1KiB:1GiB:4"}),
              "xfer-tool run all --sizes 1KiB:1GiB:4");
    EXPECT_EQ(shell_command_line({"xfer-tool", "-o", "my file.json", "it's"}),
              "xfer-tool -o 'my file.json' 'it'\\''s'");
    EXPECT_EQ(shell_command_line({"a", ""}), "a ''");
}

TEST(RunInfo, CudaVersionsAndCollectedFacts) {
    EXPECT_EQ(cuda_version_text(13000), "13.0");
    EXPECT_EQ(cuda_version_text(12080), "12.8");
    EXPECT_EQ(cuda_version_text(0), "");
    RunOptions o;
    o.seed = 18446744073709551557ull;
    o.command_line = "xfer-tool run all";
    const RunInfo info = collect_run_info(o);
    EXPECT_EQ(info.seed, "18446744073709551557");
    EXPECT_EQ(info.command_line, "xfer-tool run all");
    ASSERT_EQ(info.time.size(), 20u) << info.time; // 2026-12-01T10:20:30Z
    EXPECT_EQ(info.time.back(), 'Z');
    EXPECT_FALSE(info.host.empty());
    EXPECT_FALSE(info.commit.empty());
    int x = 0;
    EXPECT_GE(numa_node_of(&x), -1);
    EXPECT_EQ(numa_node_of(nullptr), -1);
    EXPECT_EQ(pci_numa_node(""), -1);
}

TEST(Verdict, PassOrFailWithTheCount) {
    Report report;
    report.results = {result("roundtrip", 10, 0.1)};
    EXPECT_EQ(verdict_line(report), "PASS");
    report.results.push_back(result("access", 10, 0.1, false));
    EXPECT_EQ(verdict_line(report), "FAIL (1 check failed)");
    WorkflowResult err = result("overlap", 10, 0.1);
    err.error = "xfer_copy_async failed";
    report.results.push_back(err);
    EXPECT_EQ(failed_checks(report), 2);
    EXPECT_EQ(verdict_line(report), "FAIL (2 checks failed)");
}

TEST(ReportJson, MetadataSeedAndSamplesRoundTrip) {
    Report report;
    report.tool_version = report.library_version = "1.0.0";
    report.run.time = "2026-12-01T10:20:30Z";
    report.run.host = "node7";
    report.run.commit = "abc";
    report.run.seed = "18446744073709551557";
    report.run.config.push_back({"pageable", "chunk_size", "8388608", "default"});
    report.results = {result("roundtrip", 10, 1)};
    report.results[0].device.driver_version = "13.0";
    const nlohmann::json j = report_to_json(report, true);
    EXPECT_EQ(j["run"]["seed"], "18446744073709551557");
    EXPECT_TRUE(j["run"]["seed"].is_string());
    EXPECT_EQ(j["tool"]["commit"], "abc");
    EXPECT_EQ(j["run"]["config"][0]["name"], "chunk_size");
    const nlohmann::json &f = j["results"][0]["figures"][0];
    EXPECT_DOUBLE_EQ(f["mean"].get<double>(), 10.0);
    EXPECT_DOUBLE_EQ(f["stddev"].get<double>(), 1.0);
    EXPECT_EQ(f["values"].size(), 3u);
    EXPECT_FALSE(report_to_json(report)["results"][0]["figures"][0].contains("values"));
    const Report back = report_from_json(j);
    EXPECT_EQ(back.run.host, "node7");
    EXPECT_EQ(back.run.seed, "18446744073709551557");
    EXPECT_EQ(back.results[0].device.driver_version, "13.0");
    EXPECT_DOUBLE_EQ(back.results[0].figures[0].stats->stddev, 1.0);
}

TEST(ReportTable, HeaderCarriesTheRunAndTheTableEndsWithTheVerdict) {
    Report report;
    report.tool_version = report.library_version = "1.0.0";
    report.run.time = "2026-12-01T10:20:30Z";
    report.run.host = "node7";
    report.run.command_line = "xfer-tool run roundtrip";
    report.run.commit = "abc";
    report.run.seed = "42";
    report.run.cpu_model = "Some CPU";
    report.run.cpu_numa_node = 1;
    report.run.config.push_back({"pageable", "chunk_size", "8388608", "file"});
    report.results = {result("roundtrip", 10, 1)};
    std::ostringstream out;
    write_table(out, report);
    const std::string text = out.str();
    EXPECT_NE(text.find("xfer-tool 1.0.0 (libxfer 1.0.0, commit abc)\nrun 2026-12-01T10:20:30Z on node7: xfer-tool run "
                        "roundtrip\ncpu Some CPU, NUMA node 1\nconfig pageable.chunk_size=8388608 (file)\nseed 42\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.substr(text.size() - 5), "PASS\n");
}

TEST(ReportStream, OpensTheOutputFirstAndSaysWhyItCannot) {
    try {
        ReportStream s("table", "/nonexistent-dir/r.txt", TableStyle::compact, false);
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "cannot open '/nonexistent-dir/r.txt' for writing: No such file or directory");
    }
    EXPECT_THROW(ReportStream("xml", "", TableStyle::compact, false), std::invalid_argument);
}

TEST(Progress, EstimateFromTheFinishedSteps) {
    EXPECT_EQ(Progress::estimate(0, 10, 0.0), "");
    EXPECT_EQ(Progress::estimate(2, 10, 4.0), "~16 s left");
    EXPECT_EQ(Progress::estimate(1, 10, 60.0), "~9 min left");
    EXPECT_EQ(Progress::estimate(10, 10, 60.0), "");
}

TEST(Diff, ChangedOnlyBeyondTheSpread) {
    const Stats a = summarize({9.9, 10.0, 10.1});
    EXPECT_FALSE(figure_changed(a, summarize({9.95, 10.05, 10.15})));
    EXPECT_TRUE(figure_changed(a, summarize({4.9, 5.0, 5.1})));
    // Noisy runs: a 10% move inside a 20% spread is not a change.
    EXPECT_FALSE(figure_changed(summarize({8, 10, 12}), summarize({9, 11, 13})));
    // Reports without stddev fall back to half the min-max range.
    Stats old{9.9, 10.0, 10.1, 3};
    EXPECT_TRUE(figure_changed(old, summarize({11.9, 12.0, 12.1})));
}

TEST(Diff, MatchesFiguresAndMarksBetterAndWorse) {
    Report a, b;
    a.results = {result("bandwidth", 10, 0.01)};
    b.results = {result("bandwidth", 20, 0.01)};
    WorkflowResult t = result("roundtrip", 1, 0.001);
    t.figures[0].unit = "ms";
    a.results.push_back(t);
    t.figures[0].stats = summarize({1.999, 2.0, 2.001});
    b.results.push_back(t);
    const auto changes = compare_reports(a, b);
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_TRUE(changes[0].significant);
    EXPECT_TRUE(changes[0].better); // GB/s went up
    EXPECT_DOUBLE_EQ(changes[0].change, 1.0);
    EXPECT_TRUE(changes[1].significant);
    EXPECT_FALSE(changes[1].better); // ms went up
    std::ostringstream out;
    EXPECT_EQ(write_diff(out, a, b, "a.json", "b.json", false), 1); // one regression: the time
    EXPECT_NE(out.str().find("better"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("WORSE"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("2 of 2 figures changed beyond their spread"), std::string::npos) << out.str();
    EXPECT_NE(out.str().find(": 1 worse, 1 better\n"), std::string::npos) << out.str();
    std::ostringstream same;
    EXPECT_EQ(write_diff(same, a, a, "a.json", "a.json", true), 0);
}

// A --device all report holds each backend once per device: figures pair up device by device.
TEST(Diff, PairsFiguresOfTheSameDevice) {
    Report a, b;
    WorkflowResult d0 = result("bandwidth", 10, 0.01), d1 = result("bandwidth", 30, 0.01);
    d1.device.ordinal = 1;
    a.results = {d0, d1};
    d0.figures[0].stats = summarize({9.99, 10.0, 10.01});
    d1.figures[0].stats = summarize({29.99, 30.0, 30.01});
    b.results = {d1, d0}; // another order: the device, not the position, pairs them
    const auto changes = compare_reports(a, b);
    ASSERT_EQ(changes.size(), 2u);
    for (const auto &c : changes) EXPECT_FALSE(c.significant) << c.backend;
    EXPECT_NE(changes[0].backend.find("(device 1)"), std::string::npos) << changes[0].backend;
    EXPECT_EQ(changes[1].backend.find("(device"), std::string::npos) << changes[1].backend;
}

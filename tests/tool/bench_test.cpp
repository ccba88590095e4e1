// SPDX-License-Identifier: Apache-2.0
// The bench's table of targets, its choice of targets and its verdicts (no GPU needed; the
// measurements themselves run in test_bench.py on host and on the GPU machine).
#include <algorithm>
#include <regex>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "bench/bench.hpp"
#include "bench/bench_report.hpp"
#include "bench/targets.hpp"

using namespace xfer::tool;

namespace {

std::vector<std::string> names(const std::vector<const TargetSpec *> &targets) {
    std::vector<std::string> out;
    for (const TargetSpec *t : targets) out.push_back(t->name);
    return out;
}

bool has(const std::vector<TargetSpec> &table, const std::string &name) {
    return std::any_of(table.begin(), table.end(), [&](const TargetSpec &t) { return t.name == name; });
}

BenchRow measured_row(double median, Goal goal) {
    BenchRow row;
    row.target = "pinned-raw-h2d-1MiB";
    row.ratio_unit = goal.unit;
    row.ratio = Stats{median, median, median, 10};
    row.goal = goal;
    row.verification.state = Verification::State::passed;
    return row;
}

} // namespace

TEST(BenchTargets, NamesAreUniqueStableAndStartWithTheirBackend) {
    const std::regex shape("^[a-z0-9]+(-[A-Za-z0-9]+)*$"); // as the JSON schema says
    std::set<std::string> seen;
    for (const auto *table : {&cuda_targets(), &smoke_targets()})
        for (const TargetSpec &t : *table) {
            EXPECT_TRUE(seen.insert(t.name).second) << "duplicate " << t.name;
            EXPECT_TRUE(std::regex_match(t.name, shape)) << t.name;
            EXPECT_EQ(t.name.rfind(t.backend + "-", 0), 0u) << t.name << " is about " << t.backend;
            EXPECT_FALSE(t.summary.empty()) << t.name;
            EXPECT_TRUE(t.measure) << t.name;
        }
}

TEST(BenchTargets, EveryCudaRowHasAGoalAndNoSmokeRowHasOne) {
    for (const TargetSpec &t : cuda_targets()) {
        ASSERT_TRUE(t.goal) << t.name;
        EXPECT_NE(t.backend, "host") << t.name;
    }
    for (const TargetSpec &t : smoke_targets()) {
        EXPECT_FALSE(t.goal) << t.name;
        EXPECT_EQ(t.backend, "host") << t.name;
    }
}

TEST(BenchTargets, TheIssuesTargetsAreThere) {
    const auto &t = cuda_targets();
    for (const char *dir : {"h2d", "d2h"}) {
        // Pageable vs raw at every size from 4 KiB to 1 GiB by powers of 4.
        for (const char *size :
             {"4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB", "16MiB", "64MiB", "256MiB", "1GiB"})
            EXPECT_TRUE(has(t, std::string("pageable-raw-") + dir + "-" + size)) << dir << " " << size;
        for (const char *size : {"64MiB", "256MiB", "1GiB"}) {
            EXPECT_TRUE(has(t, std::string("pageable-pinned-") + dir + "-" + size));
            EXPECT_TRUE(has(t, std::string("pageable-async-") + dir + "-" + size));
        }
        for (const char *backend : {"pinned", "pageable", "managed", "zerocopy"}) {
            EXPECT_TRUE(has(t, std::string(backend) + "-overhead-" + dir)) << backend;
            EXPECT_TRUE(has(t, std::string(backend) + "-observer-" + dir)) << backend;
        }
        EXPECT_TRUE(has(smoke_targets(), std::string("host-observer-") + dir));
        // The scattered batch on pinned and pageable.
        for (const char *backend : {"pinned", "pageable"}) {
            EXPECT_TRUE(has(t, std::string(backend) + "-batch-loop-" + dir));
            EXPECT_TRUE(has(t, std::string(backend) + "-batch-coalesced-" + dir));
        }
    }
    for (const char *name :
         {"pageable-overlap", "pinned-overlap", "pinned-malloc-h2d-256MiB", "managed-to-host-256MiB"})
        EXPECT_TRUE(has(t, name)) << name;
    // The goals as the issues write them.
    auto goal = [&](const std::string &name) {
        return std::find_if(t.begin(), t.end(), [&](const TargetSpec &s) { return s.name == name; })->goal.value();
    };
    EXPECT_EQ(goal("pageable-pinned-h2d-1GiB").value, 0.90);
    EXPECT_EQ(goal("pageable-pinned-d2h-1GiB").value, 0.85);
    EXPECT_EQ(goal("pageable-raw-h2d-4KiB").value, 0.97);
    EXPECT_EQ(goal("pageable-async-h2d-64MiB").op, Goal::Op::at_most);
    EXPECT_EQ(goal("pageable-async-h2d-64MiB").unit, "%");
    EXPECT_EQ(goal("pinned-overhead-h2d").unit, "us");
    // A no-op copy observer costs at most 0.3 us per copy.
    for (const char *name :
         {"pinned-observer-h2d", "pageable-observer-d2h", "managed-observer-h2d", "zerocopy-observer-d2h"}) {
        EXPECT_EQ(goal(name).op, Goal::Op::at_most) << name;
        EXPECT_EQ(goal(name).value, 0.3) << name;
        EXPECT_EQ(goal(name).unit, "us") << name;
    }
    // The overhead rows measure with the statistics on, and say so.
    for (const char *name : {"pinned-overhead-h2d", "pageable-overhead-d2h"}) {
        const auto it = std::find_if(t.begin(), t.end(), [&](const TargetSpec &s) { return s.name == name; });
        EXPECT_NE(it->summary.find("statistics on"), std::string::npos) << it->summary;
    }
    // A copy after an idle gap keeps within 10% of the same copy back to back.
    for (const char *name : {"pageable-gap-h2d-64MiB", "pageable-gap-d2h-256MiB", "pinned-gap-h2d-256MiB"}) {
        EXPECT_EQ(goal(name).op, Goal::Op::at_least) << name;
        EXPECT_EQ(goal(name).value, 0.90) << name;
    }
    EXPECT_EQ(goal("pinned-batch-loop-h2d").value, 10.0);
    EXPECT_EQ(goal("managed-to-host-256MiB").value, 1.5);
}

TEST(BenchSelect, DefaultIsTheCudaTableWithAGpuAndTheSmokeSetWithout) {
    EXPECT_EQ(select_targets({}, {}, true).size(), cuda_targets().size());
    const auto smoke = select_targets({}, {}, false);
    ASSERT_EQ(smoke.size(), smoke_targets().size());
    EXPECT_EQ(smoke.front(), &smoke_targets().front());
}

TEST(BenchSelect, BackendsAndPatternsNarrowTheChoiceInTableOrder) {
    for (const TargetSpec *t : select_targets({"managed"}, {}, false)) EXPECT_EQ(t->backend, "managed") << t->name;
    EXPECT_EQ(names(select_targets({}, {"pinned-overlap", "pageable-raw-h2d-*KiB"}, false)),
              (std::vector<std::string>{"pageable-raw-h2d-4KiB", "pageable-raw-h2d-16KiB", "pageable-raw-h2d-64KiB",
                                        "pageable-raw-h2d-256KiB", "pinned-overlap"}));
    // --backend host on a GPU machine: still the smoke set.
    EXPECT_EQ(select_targets({"host"}, {}, true).size(), smoke_targets().size());
    EXPECT_EQ(names(select_targets({"pinned"}, {"*-overlap"}, true)), std::vector<std::string>{"pinned-overlap"});
}

TEST(BenchSelect, ASelectionOfNothingSaysWhy) {
    try {
        select_targets({"nosuch"}, {}, true);
        FAIL() << "no error";
    } catch (const std::invalid_argument &e) {
        EXPECT_NE(std::string(e.what()).find("no bench target is about backend 'nosuch'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("pageable"), std::string::npos) << "names the backends that have some";
    }
    EXPECT_THROW(select_targets({}, {"nosuch-*"}, true), std::invalid_argument);
    EXPECT_THROW(select_targets({"host"}, {"pinned-overlap"}, true), std::invalid_argument);
}

TEST(BenchVerdict, TheMedianRatioAgainstTheGoal) {
    EXPECT_EQ(verdict(measured_row(0.95, {Goal::Op::at_least, 0.9, "x"})), Verdict::pass);
    EXPECT_EQ(verdict(measured_row(0.9, {Goal::Op::at_least, 0.9, "x"})), Verdict::pass);
    EXPECT_EQ(verdict(measured_row(0.89, {Goal::Op::at_least, 0.9, "x"})), Verdict::fail);
    EXPECT_EQ(verdict(measured_row(4.0, {Goal::Op::at_most, 5.0, "%"})), Verdict::pass);
    EXPECT_EQ(verdict(measured_row(0.2, {Goal::Op::at_most, 0.1, "us"})), Verdict::fail);
}

TEST(BenchVerdict, AFailedVerificationIsFailWhateverTheSpeed) {
    BenchRow row = measured_row(100.0, {Goal::Op::at_least, 0.9, "x"});
    row.verification.state = Verification::State::failed;
    EXPECT_EQ(verdict(row), Verdict::fail);
    row.goal.reset(); // smoke rows too
    EXPECT_EQ(verdict(row), Verdict::fail);
}

TEST(BenchVerdict, SmokeErrorAndUnverifiedRows) {
    BenchRow row = measured_row(1.0, {Goal::Op::at_least, 0.9, "x"});
    row.goal.reset();
    EXPECT_EQ(verdict(row), Verdict::smoke);
    EXPECT_EQ(goal_text(row), "(smoke)");
    row.verification.state = Verification::State::not_run;
    EXPECT_EQ(verdict(row), Verdict::error);
    row = measured_row(1.0, {Goal::Op::at_least, 0.9, "x"});
    row.ratio.reset(); // below the timer's resolution
    EXPECT_EQ(verdict(row), Verdict::error);
    row = measured_row(1.0, {Goal::Op::at_least, 0.9, "x"});
    row.error = "xfer_open: XFER_ERROR_BACKEND_NOT_FOUND";
    EXPECT_EQ(verdict(row), Verdict::error);
    EXPECT_STREQ(to_string(Verdict::error), "ERROR");
}

TEST(BenchReport, GoalsAndRatiosReadAsTheIssuesWriteThem) {
    EXPECT_EQ(goal_text(measured_row(0.934, {Goal::Op::at_least, 0.9, "x"})), ">= 0.9x");
    EXPECT_EQ(goal_text(measured_row(3.2, {Goal::Op::at_most, 5, "%"})), "<= 5%");
    EXPECT_EQ(goal_text(measured_row(0.04, {Goal::Op::at_most, 0.1, "us"})), "<= 0.1 us");
    EXPECT_EQ(ratio_text(measured_row(0.934, {Goal::Op::at_least, 0.9, "x"})), "0.934x");
    EXPECT_EQ(ratio_text(measured_row(12.414, {Goal::Op::at_least, 10, "x"})), "12.41x");
    EXPECT_EQ(ratio_text(measured_row(3.24, {Goal::Op::at_most, 5, "%"})), "3.2%");
    EXPECT_EQ(ratio_text(measured_row(0.04, {Goal::Op::at_most, 0.1, "us"})), "+0.040 us");
    EXPECT_EQ(ratio_text(measured_row(-0.02, {Goal::Op::at_most, 0.1, "us"})), "-0.020 us");
}

TEST(BenchReport, JsonAndSummaryCountTheVerdicts) {
    BenchReport report;
    report.tool_version = "1.0.0";
    report.library_version = "1.0.0";
    report.repeats = 10;
    report.rows.push_back(measured_row(0.95, {Goal::Op::at_least, 0.9, "x"}));
    report.rows.push_back(measured_row(0.5, {Goal::Op::at_least, 0.9, "x"}));
    EXPECT_EQ(summary_line(report), "2 targets: 1 PASS, 1 FAIL");
    const nlohmann::json j = bench_to_json(report);
    EXPECT_TRUE(j.at("results").empty());
    EXPECT_EQ(j.at("units").at("us"), "microseconds");
    EXPECT_TRUE(j.at("bench").at("device").is_null());
    EXPECT_EQ(j.at("bench").at("verdicts"), (nlohmann::json{{"PASS", 1}, {"FAIL", 1}}));
    const nlohmann::json &row = j.at("bench").at("targets").at(1);
    EXPECT_EQ(row.at("verdict"), "FAIL");
    EXPECT_EQ(row.at("goal"), (nlohmann::json{{"op", ">="}, {"value", 0.9}, {"unit", "x"}}));
    EXPECT_EQ(row.at("ratio").at("median"), 0.5);
    EXPECT_TRUE(row.at("xfer").at("median").is_null());
}

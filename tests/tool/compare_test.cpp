// SPDX-License-Identifier: Apache-2.0
// compare's recommendations and side-by-side table.
#include <sstream>

#include <gtest/gtest.h>

#include "compare.hpp"

using namespace xfer::tool;

namespace {

WorkflowResult result(const std::string &workflow, const std::string &backend,
                      std::vector<std::pair<std::string, double>> medians, bool verified = true) {
    WorkflowResult r;
    r.workflow = workflow;
    r.backend = backend;
    r.device.kind = backend == "host" ? "host" : "cuda";
    for (const auto &[name, ms] : medians) r.figures.push_back(Figure{name, "ms", 1048576, Stats{ms, ms, ms, 1}, ""});
    r.verification.state = verified ? Verification::State::passed : Verification::State::failed;
    return r;
}

} // namespace

TEST(Recommend, LowestMedianOfVerifiedResultsWins) {
    std::vector<WorkflowResult> results = {
        result("roundtrip", "pageable", {{"device total", 20.0}}),
        result("roundtrip", "pinned", {{"device total", 11.0}}),
        result("roundtrip", "managed", {{"device total", 5.0}}, /*verified=*/false),
        result("overlap", "pinned", {{"pipelined", 4.0}}),
        result("overlap", "pageable", {{"pipelined", 3.0}}),
        result("batching", "pinned", {{"one call each", 9.0}, {"one batch call", 2.0}, {"one coalesced copy", 0.5}}),
        result("batching", "pageable", {{"one call each", 8.0}, {"one batch call", 7.0}}),
    };
    auto recs = recommend(results);
    ASSERT_EQ(recs.size(), 4u);
    EXPECT_EQ(recs[0].pattern, "large one-off transfers");
    EXPECT_EQ(recs[0].backend, "pinned"); // managed was faster but did not verify
    EXPECT_NE(recs[0].basis.find("pinned 11.00 ms, pageable 20.00 ms"), std::string::npos) << recs[0].basis;
    EXPECT_EQ(recs[0].basis.find("managed"), std::string::npos);
    EXPECT_EQ(recs[1].pattern, "streaming");
    EXPECT_EQ(recs[1].backend, "pageable");
    EXPECT_EQ(recs[2].pattern, "many small copies");
    EXPECT_EQ(recs[2].backend, "pinned"); // best of single and batch calls; coalescing is a code change
    EXPECT_NE(recs[2].basis.find("pinned 2.000 ms (one batch call)"), std::string::npos) << recs[2].basis;
    EXPECT_EQ(recs[3].pattern, "data read once by a kernel");
    EXPECT_EQ(recs[3].backend, "");
    EXPECT_EQ(recs[3].basis, "no verified access result");
}

TEST(Recommend, HostIsLeftOutWhereARealDeviceWasMeasured) {
    // On a GPU machine the emulated device is a reference, not advice, however fast its memcpy.
    std::vector<WorkflowResult> gpu = {
        result("batching", "host", {{"one batch call", 1.0}}),
        result("batching", "pinned", {{"one batch call", 10.0}}),
        result("batching", "zerocopy", {{"one batch call", 3.0}}),
    };
    auto recs = recommend(gpu);
    EXPECT_EQ(recs[2].backend, "zerocopy");
    EXPECT_EQ(recs[2].basis.find("host"), std::string::npos) << recs[2].basis;

    // Without a GPU the host backend is all there is, and it is recommended.
    std::vector<WorkflowResult> cpu = {result("batching", "host", {{"one batch call", 1.0}})};
    EXPECT_EQ(recommend(cpu)[2].backend, "host");
}

TEST(Comparison, SideBySideTableHasABackendPerColumn) {
    Report report;
    report.results = {result("roundtrip", "host", {{"device total", 2.0}}),
                      result("roundtrip", "pinned", {{"device total", 1.0}})};
    report.recommendations = recommend(report.results);
    std::ostringstream out;
    write_comparison(out, report);
    const std::string text = out.str();
    EXPECT_NE(text.find("workflow   figure         size  unit    host  pinned"), std::string::npos) << text;
    EXPECT_NE(text.find("roundtrip  device total  1 MiB  ms     2.000   1.000"), std::string::npos) << text;
    EXPECT_NE(text.find("roundtrip  verification               passed  passed"), std::string::npos) << text;
    EXPECT_NE(text.find("large one-off transfers: pinned ("), std::string::npos) << text;
    EXPECT_NE(text.find("streaming: no recommendation (no verified overlap result)"), std::string::npos) << text;
}

TEST(Comparison, PathsRowPerWorkflowAndEachBackendsTopPaths) {
    Report report;
    WorkflowResult pageable = result("roundtrip", "pageable", {{"device total", 3.0}});
    pageable.paths.measured = true;
    pageable.paths.add({"driver_pageable", 1, 1048576, 10});
    pageable.paths.add({"staged", 3, 3145728, 30});
    WorkflowResult pinned = result("roundtrip", "pinned", {{"device total", 1.0}});
    pinned.paths.measured = true;
    pinned.paths.add({"pinned_dma", 4, 4194304, 40});
    WorkflowResult pinned_overlap = result("overlap", "pinned", {{"pipelined", 1.0}});
    pinned_overlap.paths.measured = true;
    pinned_overlap.paths.add({"pinned_dma", 8, 1048576, 80});
    pinned_overlap.paths.registrations = 2;
    WorkflowResult managed = result("roundtrip", "managed", {});
    managed.error = "xfer_open: cannot open"; // never opened: no statistics
    report.results = {pageable, pinned, pinned_overlap, managed};
    report.recommendations = recommend(report.results);
    std::ostringstream out;
    write_comparison(out, report);
    const std::string text = out.str();

    auto line_starting = [&](const std::string &start) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line))
            if (line.rfind(start, 0) == 0) return line;
        return std::string();
    };
    const std::string roundtrip = line_starting("   roundtrip  paths");
    ASSERT_FALSE(roundtrip.empty()) << text;
    EXPECT_NE(roundtrip.find("  staged 75%, +1 more  "), std::string::npos) << roundtrip;
    EXPECT_NE(roundtrip.find("  pinned_dma 100%"), std::string::npos) << roundtrip;
    const std::string overlap = line_starting("   overlap    paths");
    EXPECT_NE(overlap.find("  pinned_dma 100%"), std::string::npos) << text;

    EXPECT_NE(text.find("\n== paths (every workflow's copies, by bytes)\n"
                        "   pageable: staged 75%, driver_pageable 25% (4 MiB in 4 copies)\n"
                        "   pinned: pinned_dma 100% (5 MiB in 12 copies; 2 registrations)\n"
                        "   managed: not measured (the backend did not open)\n"),
              std::string::npos)
        << text;
}

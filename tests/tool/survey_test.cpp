// SPDX-License-Identifier: Apache-2.0
// The MPI survey's parts that need no MPI: which launcher variables start one, a rank's
// report through its wire format and back, merging on rank 0, the summary, the report formats.
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cluster/cluster.hpp"
#include "cluster/survey.hpp"
#include "report/report.hpp"

using namespace xfer::tool;

namespace {

// A bandwidth result as a rank reports it: h2d and d2h GB/s at 64 KiB and 1 MiB (medians
// given), a raw-call rate, and an n/a figure.
WorkflowResult bandwidth(double h2d_1mib, double d2h_1mib, int device = 0) {
    WorkflowResult r;
    r.workflow = "bandwidth";
    r.backend = "pinned";
    r.device = DeviceSummary{"NVIDIA H200", "cuda", device, "Gen5 x16", "0000:1b:00.0"};
    r.parameters.push_back({"sizes", "64 KiB,1 MiB", std::nullopt});
    r.parameters.push_back({"repeats", "3", 3});
    r.figures.push_back(Figure{"h2d", "GB/s", 65536, Stats{1.0, 2.0, 3.0, 3}, ""});
    r.figures.push_back(Figure{"h2d", "GB/s", 1048576, Stats{h2d_1mib - 1, h2d_1mib, h2d_1mib + 1, 3}, ""});
    r.figures.push_back(Figure{"raw h2d", "GB/s", 1048576, Stats{1.0, 1.0, 1.0, 3}, "cudaMemcpyAsync"});
    r.figures.push_back(Figure{"d2h", "GB/s", 1048576, Stats{d2h_1mib, d2h_1mib, d2h_1mib, 3}, ""});
    r.figures.push_back(Figure{"h2d", "ms", 1048576, Stats{0.1, 0.2, 0.3, 3}, ""});
    r.figures.push_back(Figure{"bidirectional", "GB/s", 1048576, std::nullopt, "n/a"});
    r.verification.state = Verification::State::passed;
    r.verification.detail = "every byte";
    r.verification.checked = 1048576;
    r.paths.measured = true;
    r.paths.add({"pinned_dma", 12, 12 << 20, 3400});
    return r;
}

RankReport rank_report(int rank, const std::string &host, std::vector<WorkflowResult> results) {
    RankReport r;
    r.info.rank = rank;
    r.info.local_rank = rank % 2;
    r.info.hostname = host;
    r.info.cpu_model = "AMD EPYC";
    r.info.time = "2026-12-01T10:20:30Z";
    r.results = std::move(results);
    r.tool_version = r.library_version = "1.0.0";
    return r;
}

Report base_report() {
    Report base;
    base.tool_version = base.library_version = "1.0.0";
    base.run.host = "node-a";
    base.run.time = "2026-12-01T10:20:30Z";
    base.run.command_line = "xfer-tool run bandwidth";
    return base;
}

// Four ranks on two hosts; rank 3 (node-b) has the slow h2d link.
std::vector<RankReport> four_ranks() {
    return {rank_report(0, "node-a", {bandwidth(50.0, 40.0)}), rank_report(1, "node-a", {bandwidth(52.0, 41.0, 1)}),
            rank_report(2, "node-b", {bandwidth(51.0, 39.0)}), rank_report(3, "node-b", {bandwidth(20.0, 42.0, 1)})};
}

} // namespace

TEST(SurveyLauncher, KnowsOpenMpiPmixAndPmiButNotAPlainShell) {
    auto env = [](std::map<std::string, std::string> vars) {
        return [vars](const char *name) -> const char * {
            auto it = vars.find(name);
            return it == vars.end() ? nullptr : it->second.c_str();
        };
    };
    EXPECT_FALSE(started_by_mpi_launcher(env({})));
    EXPECT_FALSE(started_by_mpi_launcher(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})));
    EXPECT_TRUE(started_by_mpi_launcher(env({{"OMPI_COMM_WORLD_SIZE", "2"}})));
    EXPECT_TRUE(started_by_mpi_launcher(env({{"PMIX_RANK", "0"}})));
    EXPECT_TRUE(started_by_mpi_launcher(env({{"PMI_SIZE", "8"}})));
    EXPECT_FALSE(started_by_mpi_launcher(env({{"OMPI_COMM_WORLD_SIZE", ""}})));
    EXPECT_FALSE(started_by_mpi_launcher(env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"XFER_TOOL_MPI", "0"}})));
    EXPECT_TRUE(started_by_mpi_launcher(env({{"PMI_SIZE", "2"}, {"XFER_TOOL_MPI", "1"}})));
}

TEST(SurveyWire, CarriesEveryFieldNanIncluded) {
    RankReport sent = rank_report(3, "node-b", {bandwidth(20.0, 42.0, 1)});
    sent.info.error = "";
    sent.interrupted = 15;
    sent.results[0].figures[0].stats->values = {1.0, 2.0, 3.0};
    sent.results[0].figures[0].stats->mean = 2.0;
    sent.results[0].error = "xfer_copy_async: XFER_ERROR_BACKEND: boom";
    sent.results[0].paths.slow_copies = 5;
    sent.results[0].paths.registrations = 7;
    const RankReport got = from_wire(to_wire(sent));
    EXPECT_EQ(got.info.rank, 3);
    EXPECT_EQ(got.info.local_rank, 1);
    EXPECT_EQ(got.info.hostname, "node-b");
    EXPECT_EQ(got.info.cpu_model, "AMD EPYC");
    EXPECT_EQ(got.interrupted, 15);
    ASSERT_EQ(got.results.size(), 1u);
    const WorkflowResult &r = got.results[0];
    EXPECT_EQ(r.workflow, "bandwidth");
    EXPECT_EQ(r.device.ordinal, 1);
    EXPECT_EQ(r.device.pcie_link, "Gen5 x16");
    EXPECT_EQ(r.device.pci_bus_id, "0000:1b:00.0");
    ASSERT_EQ(r.parameters.size(), 2u);
    EXPECT_EQ(r.parameters[0].text, "64 KiB,1 MiB");
    EXPECT_FALSE(r.parameters[0].value);
    EXPECT_EQ(r.parameters[1].value, 3u);
    ASSERT_EQ(r.figures.size(), 6u);
    EXPECT_EQ(r.figures[0].stats->values, (std::vector<double>{1.0, 2.0, 3.0}));
    EXPECT_EQ(r.figures[0].stats->mean, 2.0);
    EXPECT_TRUE(std::isnan(r.figures[1].stats->stddev)); // never measured: NaN, not 0 or null
    EXPECT_EQ(r.figures[1].stats->median, 20.0);
    EXPECT_EQ(r.figures[2].note, "cudaMemcpyAsync");
    EXPECT_FALSE(r.figures[5].stats);
    EXPECT_EQ(r.verification.state, Verification::State::passed);
    EXPECT_EQ(r.verification.checked, 1048576u);
    EXPECT_EQ(r.error, "xfer_copy_async: XFER_ERROR_BACKEND: boom");
    ASSERT_TRUE(r.paths.measured);
    ASSERT_EQ(r.paths.paths.size(), 1u);
    EXPECT_EQ(r.paths.paths[0].bytes, 12u << 20);
    EXPECT_EQ(r.paths.slow_copies, 5u);
    EXPECT_EQ(r.paths.registrations, 7u);
}

TEST(SurveyWire, RefusesBytesOfAnotherKind) {
    EXPECT_THROW(from_wire("not cbor at all"), std::runtime_error);
    const std::vector<std::uint8_t> other = nlohmann::json::to_cbor(nlohmann::json{{"format", "something-else/1"}});
    EXPECT_THROW(from_wire(std::string(other.begin(), other.end())), std::runtime_error);
}

TEST(SurveyMerge, TagsEveryResultAndGroupsByWorkflow) {
    std::vector<RankReport> ranks = four_ranks();
    WorkflowResult roundtrip = bandwidth(1, 1);
    roundtrip.workflow = "roundtrip";
    ranks[0].results.push_back(roundtrip);
    ranks[1].results.push_back(roundtrip);
    ranks[2].info.error = "no backend is available";
    ranks[2].results.clear();
    const Report merged = merge_survey(base_report(), 4, ranks);
    ASSERT_EQ(merged.results.size(), 5u);
    const std::vector<std::pair<std::string, int>> order = {
        {"bandwidth", 0}, {"bandwidth", 1}, {"bandwidth", 3}, {"roundtrip", 0}, {"roundtrip", 1}};
    for (std::size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(merged.results[i].workflow, order[i].first);
        EXPECT_EQ(merged.results[i].rank, order[i].second);
    }
    EXPECT_EQ(merged.results[2].hostname, "node-b");
    EXPECT_EQ(merged.run.host, "node-a");
    ASSERT_TRUE(merged.survey);
    EXPECT_EQ(merged.survey->size, 4);
    EXPECT_EQ(merged.survey->hosts(), 2);
    ASSERT_EQ(merged.survey->ranks.size(), 4u);
    EXPECT_EQ(merged.survey->ranks[2].error, "no backend is available");
    // The rank's error counts as a failed check: PASS would hide it.
    EXPECT_EQ(failed_checks(merged), 1);
}

TEST(SurveySummary, NamesTheSlowRankAgainstTheMedianAtTheLargestSize) {
    const Report merged = merge_survey(base_report(), 4, four_ranks());
    const std::vector<SurveyLine> &lines = merged.survey->summary;
    // Rates only (the workflow has some): h2d and d2h, not the raw call's, not ms, not n/a.
    ASSERT_EQ(lines.size(), 2u);
    const SurveyLine &h2d = lines[0];
    EXPECT_EQ(h2d.figure, "h2d");
    EXPECT_EQ(h2d.unit, "GB/s");
    EXPECT_EQ(h2d.bytes, 1048576u);
    EXPECT_EQ(h2d.results, 4);
    EXPECT_DOUBLE_EQ(h2d.median, 50.5); // of 20, 50, 51, 52
    EXPECT_EQ(h2d.slowest_rank, 3);
    EXPECT_EQ(h2d.slowest_hostname, "node-b");
    EXPECT_EQ(h2d.slowest_device, 1);
    EXPECT_DOUBLE_EQ(h2d.slowest, 20.0);
    EXPECT_DOUBLE_EQ(h2d.vs_median, 20.0 / 50.5);
    const SurveyLine &d2h = lines[1];
    EXPECT_EQ(d2h.figure, "d2h");
    EXPECT_EQ(d2h.slowest_rank, 2);
    EXPECT_DOUBLE_EQ(d2h.median, 40.5);
}

TEST(SurveySummary, TheLongestTimeWhenAWorkflowHasNoRatesAndFailedResultsDoNotCount) {
    auto overlap = [](double pipelined) {
        WorkflowResult r;
        r.workflow = "overlap";
        r.backend = "host";
        r.figures.push_back(Figure{"serial", "ms", 0, Stats{2, 2, 2, 3}, ""});
        r.figures.push_back(Figure{"pipelined", "ms", 0, Stats{pipelined, pipelined, pipelined, 3}, ""});
        r.figures.push_back(Figure{"speed-up", "x", 0, Stats{2, 2, 2, 3}, ""});
        r.verification.state = Verification::State::passed;
        return r;
    };
    WorkflowResult failed = overlap(1000.0);
    failed.verification.state = Verification::State::failed;
    std::vector<WorkflowResult> results = {overlap(3.0), overlap(5.0), overlap(4.0), failed};
    for (std::size_t i = 0; i < results.size(); ++i) results[i].rank = static_cast<int>(i);
    const std::vector<SurveyLine> lines = summarize_survey(results);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].figure, "pipelined");
    EXPECT_FALSE(lines[0].higher_is_better);
    EXPECT_EQ(lines[0].results, 3);
    EXPECT_DOUBLE_EQ(lines[0].median, 4.0);
    EXPECT_EQ(lines[0].slowest_rank, 1); // the highest time
    EXPECT_DOUBLE_EQ(lines[0].vs_median, 1.25);
}

TEST(SurveyReport, EveryFormatCarriesRankAndHost) {
    const Report merged = merge_survey(base_report(), 4, four_ranks());
    std::ostringstream table;
    write_table(table, merged);
    const std::string text = table.str();
    EXPECT_NE(text.find("survey: 4 ranks on 2 hosts"), std::string::npos) << text;
    EXPECT_NE(text.find("== bandwidth on pinned, rank 3 on node-b: NVIDIA H200 (device 1"), std::string::npos) << text;
    EXPECT_NE(text.find("rank 3 on node-b (device 1)  20.00 GB/s      0.40x"), std::string::npos) << text;
    EXPECT_EQ(text.substr(text.size() - 5), "PASS\n");

    std::ostringstream csv;
    write_csv(csv, merged);
    const std::string rows = csv.str();
    EXPECT_EQ(rows.rfind("rank,hostname,tool_version,", 0), 0u) << rows;
    EXPECT_NE(rows.find("\n3,node-b,1.0.0,1.0.0,pinned,NVIDIA H200,"), std::string::npos) << rows;
    EXPECT_EQ(rows.find("# "), std::string::npos) << rows;
    // The ranks and the summary as '#' lines before the header, when asked (--csv-metadata).
    std::ostringstream commented;
    write_csv(commented, merged, CsvMetadata::comments);
    const std::string with = commented.str();
    EXPECT_NE(with.find("\n# survey: 4 ranks on 2 hosts"), std::string::npos) << with;
    EXPECT_NE(with.find("# slowest: bandwidth on pinned, h2d at 1 MiB: rank 3 on node-b (device 1) 20.00 GB/s"),
              std::string::npos)
        << with;
    EXPECT_NE(with.find("\nrank,hostname,tool_version,"), std::string::npos) << with;

    const nlohmann::json j = report_to_json(merged);
    ASSERT_EQ(j["results"].size(), 4u);
    EXPECT_EQ(j["results"][3]["rank"], 3);
    EXPECT_EQ(j["results"][3]["hostname"], "node-b");
    EXPECT_EQ(j["survey"]["size"], 4);
    EXPECT_EQ(j["survey"]["hosts"], 2);
    EXPECT_EQ(j["survey"]["ranks"][1]["local_rank"], 1);
    EXPECT_EQ(j["survey"]["summary"][0]["slowest"]["rank"], 3);
    EXPECT_DOUBLE_EQ(j["survey"]["summary"][0]["median"].get<double>(), 50.5);
}

TEST(SurveyReport, APlainReportHasNoRankColumns) {
    Report plain = base_report();
    plain.results.push_back(bandwidth(50.0, 40.0));
    std::ostringstream csv;
    write_csv(csv, plain);
    EXPECT_EQ(csv.str().find("rank,hostname"), std::string::npos);
    const nlohmann::json j = report_to_json(plain);
    EXPECT_FALSE(j.contains("survey"));
    EXPECT_FALSE(j["results"][0].contains("rank"));
}

TEST(SurveyFiles, RankGoesBeforeTheExtension) {
    EXPECT_EQ(rank_file_path("trace.json", 1), "trace.rank1.json");
    EXPECT_EQ(rank_file_path("out/run.2/trace", 12), "out/run.2/trace.rank12");
    EXPECT_EQ(rank_file_path("/tmp/.trace", 0), "/tmp/.trace.rank0");
}

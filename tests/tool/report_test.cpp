// SPDX-License-Identifier: Apache-2.0
// Report formatting: table, CSV and JSON of one hand-built report, and JSON read back.
#include <sstream>

#include <gtest/gtest.h>

#include "report/report.hpp"

using namespace xfer::tool;

namespace {

Report sample_report() {
    Report report;
    report.tool_version = "1.0.0";
    report.library_version = "1.0.0";
    WorkflowResult r;
    r.workflow = "bandwidth";
    r.backend = "pinned";
    r.device = DeviceSummary{"NVIDIA H200", "cuda", 0, "Gen5 x16", "0000:1b:00.0"};
    r.parameters.push_back({"size", "256 MiB", 268435456});
    r.parameters.push_back({"sizes", "1 KiB,4 KiB", std::nullopt});
    r.figures.push_back(Figure{"h2d", "GB/s", 1048576, Stats{50.0, 52.5, 55.0, 3}, ""});
    r.figures.push_back(Figure{"h2d", "ms", 1048576, Stats{0.019, 0.02, 0.021, 3}, "note, with \"quotes\""});
    r.figures.push_back(Figure{"d2h", "GB/s", 1048576, std::nullopt, "no copy (mapped)"});
    r.verification.state = Verification::State::passed;
    r.verification.detail = "2 elements match (a)";
    r.verification.checked = 2;
    report.results.push_back(r);

    WorkflowResult failed = r;
    failed.workflow = "roundtrip";
    failed.figures.clear();
    failed.verification.state = Verification::State::failed;
    failed.verification.detail = "sqrt result: first mismatch at index 7: expected 2, got 3 (1 of 8 elements differ)";
    failed.error = "";
    report.results.push_back(failed);
    return report;
}

} // namespace

TEST(TableReport, ShowsUnitsDeviceFiguresAndVerification) {
    std::ostringstream out;
    write_table(out, sample_report(), TableStyle::long_form);
    const std::string text = out.str();
    EXPECT_NE(text.find("GB/s = 10^9 bytes/s"), std::string::npos);
    EXPECT_NE(text.find("KiB/MiB/GiB = 2^10/2^20/2^30 bytes"), std::string::npos);
    EXPECT_NE(text.find("== bandwidth on pinned: NVIDIA H200 (device 0, PCIe link Gen5 x16)"), std::string::npos);
    EXPECT_NE(text.find("size=256 MiB  sizes=1 KiB,4 KiB"), std::string::npos);
    EXPECT_NE(text.find("h2d     1 MiB  GB/s    50.00    52.50    55.00"), std::string::npos) << text;
    EXPECT_NE(text.find("d2h     1 MiB  GB/s        -        -        -     -       -  no copy (mapped)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("figure   size  unit      min   median      max  mean  stddev  note"), std::string::npos)
        << text;
    EXPECT_EQ(text.substr(text.size() - 22), "FAIL (1 check failed)\n");
    EXPECT_NE(text.find("verification: passed (2 elements match (a))"), std::string::npos);
    EXPECT_NE(text.find("verification: FAILED: sqrt result: first mismatch at index 7"), std::string::npos);
}

TEST(TableReport, CompactBandwidthIsOneRowPerSizeWithNotesOnce) {
    std::ostringstream out;
    write_table(out, sample_report());
    const std::string text = out.str();
    EXPECT_NE(
        text.find("    size  h2d GB/s  d2h GB/s\n   1 MiB     52.50       n/a\n   note d2h GB/s: no copy (mapped)\n"),
        std::string::npos)
        << text;
}

TEST(CsvReport, OneRowPerFigureWithQuotedFields) {
    std::ostringstream out;
    write_csv(out, sample_report());
    std::istringstream in(out.str());
    std::string header, row1, row2, row3, row4;
    // The header row is the first line: any CSV reader takes it without options.
    std::getline(in, header);
    std::getline(in, row1);
    std::getline(in, row2);
    std::getline(in, row3);
    std::getline(in, row4);
    EXPECT_EQ(header,
              "tool_version,library_version,backend,device,pcie_link,driver_version,runtime_version,workflow,figure,"
              "unit,bytes,size,min,median,max,mean,stddev,samples,verification,note");
    // mean / stddev stay empty where unknown (these hand-made Stats have none).
    EXPECT_EQ(row1,
              "1.0.0,1.0.0,pinned,NVIDIA H200,Gen5 x16,,,bandwidth,h2d,GB/s,1048576,1 MiB,50,52.5,55,,,3,passed,");
    EXPECT_EQ(row2,
              "1.0.0,1.0.0,pinned,NVIDIA H200,Gen5 x16,,,bandwidth,h2d,ms,1048576,1 MiB,0.019,0.02,0.021,,,3,passed,"
              "\"note, with \"\"quotes\"\"\"");
    EXPECT_EQ(
        row3,
        "1.0.0,1.0.0,pinned,NVIDIA H200,Gen5 x16,,,bandwidth,d2h,GB/s,1048576,1 MiB,,,,,,0,passed,no copy (mapped)");
    EXPECT_EQ(row4, "1.0.0,1.0.0,pinned,NVIDIA H200,Gen5 x16,,,roundtrip,verification,,0,,,,,,,0,failed,"
                    "\"sqrt result: first mismatch at index 7: expected 2, got 3 (1 of 8 elements differ)\"");
}

TEST(CsvReport, MetadataAsCommentLinesOnlyWhenAsked) {
    Report report = sample_report();
    report.run.time = "2026-12-01T10:20:30Z";
    report.run.host = "node07";
    report.run.seed = "42";
    report.run.config.push_back({"host", "device_memory", "0", "default"});
    std::ostringstream plain;
    write_csv(plain, report);
    EXPECT_EQ(plain.str().rfind("tool_version,library_version,backend,", 0), 0u) << plain.str();
    EXPECT_EQ(plain.str().find('#'), std::string::npos) << plain.str();

    std::ostringstream with;
    write_csv(with, report, CsvMetadata::comments);
    const std::string text = with.str();
    EXPECT_EQ(text.rfind("# xfer-tool 1.0.0, libxfer 1.0.0, commit unknown\n", 0), 0u) << text;
    for (const char *line : {"\n# time: 2026-12-01T10:20:30Z\n", "\n# host: node07\n", "\n# seed: 42\n",
                             "\n# config: host.device_memory = 0 (default)\n", "\n# units: GB/s = 10^9 bytes/s;"})
        EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
    // After the comments, the same header and rows as without them.
    const std::size_t header = text.find("\ntool_version,");
    ASSERT_NE(header, std::string::npos) << text;
    EXPECT_EQ(text.substr(header + 1), plain.str());
}

// peer: the GB/s as a matrix, one row per source device, one column per destination.
TEST(TableReport, PeerMatrixRowsAreSourcesColumnsDestinations) {
    WorkflowResult r;
    r.workflow = "peer";
    r.backend = "host";
    r.device = DeviceSummary{"host (emulated device)", "host", 0, "", ""};
    r.parameters.push_back({"raw call", "std::memcpy", std::nullopt});
    r.parameters.push_back({"matrix", "GB/s median, row = source, column = destination: ...", std::nullopt});
    const double rates[3][3] = {{0, 12.5, 13.25}, {21, 0, 23.5}, {31, 32, 0}};
    for (int from = 0; from < 3; ++from)
        for (int to = 0; to < 3; ++to) {
            if (from == to) continue;
            const std::string pair = std::to_string(from) + "->" + std::to_string(to);
            const double v = rates[from][to];
            r.figures.push_back(Figure{"peer " + pair, "GB/s", 1024, Stats{v, v, v, 2}, ""});
            // The raw call of 2->0 was not measured: n/a in its matrix.
            std::optional<Stats> raw;
            if (pair != "2->0") raw = Stats{v / 2, v / 2, v / 2, 2};
            r.figures.push_back(Figure{"raw peer " + pair, "GB/s", 1024, raw, ""});
            r.figures.push_back(Figure{"peer " + pair + " xfer / raw", "x", 1024, Stats{2, 2, 2, 2}, ""});
        }
    std::ostringstream out;
    write_table_result(out, r, TableStyle::compact);
    const std::string text = out.str();
    EXPECT_NE(text.find("   GB/s, xfer_memcpy_peer_async (medians; row = source device, column = destination device):\n"
                        "   src\\dst      0      1      2\n"
                        "         0      -  12.50  13.25\n"
                        "         1  21.00      -  23.50\n"
                        "         2  31.00  32.00      -\n"
                        "   GB/s, std::memcpy (medians; row = source device, column = destination device):\n"
                        "   src\\dst      0      1      2\n"
                        "         0      -  6.250  6.625\n"
                        "         1  10.50      -  11.75\n"
                        "         2    n/a  16.00      -\n"),
              std::string::npos)
        << text;
    // Every figure is still listed, and the one-line matrix parameter gives way to the matrix.
    EXPECT_NE(text.find("peer 0->1 xfer / raw"), std::string::npos) << text;
    EXPECT_EQ(text.find("matrix="), std::string::npos) << text;
    EXPECT_NE(text.find("raw call=std::memcpy"), std::string::npos) << text;

    // No pair (one device): no matrix.
    WorkflowResult none = r;
    none.figures = {Figure{"peer", "GB/s", 1024, std::nullopt, "no pair"}};
    std::ostringstream one;
    write_peer_matrices(one, none);
    EXPECT_EQ(one.str(), "");
}

TEST(JsonReport, OneSchemaForEveryWorkflow) {
    nlohmann::json j = report_to_json(sample_report());
    EXPECT_EQ(j["schema"], "xfer-tool-results/1");
    EXPECT_EQ(j["tool"]["name"], "xfer-tool");
    EXPECT_EQ(j["units"]["GB/s"], "10^9 bytes per second");
    ASSERT_EQ(j["results"].size(), 2u);
    const auto &r = j["results"][0];
    EXPECT_EQ(r["workflow"], "bandwidth");
    EXPECT_EQ(r["device"]["pcie_link"], "Gen5 x16");
    EXPECT_EQ(r["parameters"]["size"], 268435456);
    EXPECT_EQ(r["parameters"]["sizes"], "1 KiB,4 KiB");
    EXPECT_EQ(r["figures"][0]["median"], 52.5);
    EXPECT_EQ(r["figures"][0]["samples"], 3);
    EXPECT_TRUE(r["figures"][2]["median"].is_null());
    EXPECT_EQ(r["figures"][2]["samples"], 0);
    EXPECT_EQ(r["verification"]["status"], "passed");
    EXPECT_TRUE(r["error"].is_null());
    EXPECT_EQ(j["results"][1]["verification"]["status"], "failed");
    EXPECT_FALSE(j.contains("recommendations"));
}

TEST(JsonReport, ReadsBackWhatItWrites) {
    Report original = sample_report();
    Report back = report_from_json(report_to_json(original));
    ASSERT_EQ(back.results.size(), 2u);
    EXPECT_EQ(back.results[0].backend, "pinned");
    EXPECT_EQ(back.results[0].device.pcie_link, "Gen5 x16");
    ASSERT_EQ(back.results[0].figures.size(), 3u);
    ASSERT_TRUE(back.results[0].figures[0].stats.has_value());
    EXPECT_DOUBLE_EQ(back.results[0].figures[0].stats->median, 52.5);
    EXPECT_EQ(back.results[0].figures[0].bytes, 1048576u);
    EXPECT_FALSE(back.results[0].figures[2].stats.has_value());
    EXPECT_EQ(back.results[1].verification.state, Verification::State::failed);
}

TEST(JsonReport, RejectsOtherFiles) {
    EXPECT_THROW(report_from_json(nlohmann::json{{"traceEvents", nlohmann::json::array()}}), std::runtime_error);
    nlohmann::json broken = report_to_json(sample_report());
    broken["results"][0].erase("figures");
    try {
        report_from_json(broken);
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "a result has no \"figures\"");
    }
}

TEST(ReportWriter, UnknownFormatIsRefused) {
    EXPECT_THROW(write_report(sample_report(), "xml", ""), std::invalid_argument);
    EXPECT_THROW(write_report(sample_report(), "csv", "/nonexistent-dir/x.csv"), std::runtime_error);
}

namespace {

// A pageable run: most bytes staged, a head through the driver, registrations for the arena.
Report report_with_paths() {
    Report report = sample_report();
    report.results.resize(1);
    PathBreakdown &p = report.results[0].paths;
    p.measured = true;
    p.add({"driver_pageable", 2, 4096, 1500});
    p.add({"staged", 64, 1073741824, 250000000});
    p.add({"staged", 1, 1048576, 1000000}); // sums into the same path
    p.slow_copies = 2;
    p.registrations = 3;
    return report;
}

} // namespace

TEST(PathsReport, TableHasOnePathsLineMostBytesFirst) {
    std::ostringstream out;
    write_table(out, report_with_paths());
    EXPECT_NE(out.str().find("\n   paths: staged 65 copies 1 GiB, driver_pageable 2 copies 4 KiB; 2 slow copies; 3 "
                             "registrations\n   verification: passed"),
              std::string::npos)
        << out.str();
    // A result without statistics (the sample's) has no paths line.
    std::ostringstream plain;
    write_table(plain, sample_report());
    EXPECT_EQ(plain.str().find("paths:"), std::string::npos) << plain.str();
}

TEST(PathsReport, CsvHasCountedRowsPerPath) {
    std::ostringstream out;
    write_csv(out, report_with_paths());
    const std::string text = out.str();
    const std::string prefix = "1.0.0,1.0.0,pinned,NVIDIA H200,Gen5 x16,,,bandwidth,";
    // Byte counts above 10^9 stay exact (no %g rounding).
    for (const std::string &row : {
             std::string("path:staged:copies,count,0,,65,65,65,65,0,1,passed,"),
             std::string("path:staged:bytes,bytes,0,,1074790400,1074790400,1074790400,1074790400,0,1,passed,"),
             std::string("path:staged:host_ns,ns,0,,251000000,251000000,251000000,251000000,0,1,passed,"),
             std::string("path:driver_pageable:copies,count,0,,2,2,2,2,0,1,passed,"),
             std::string("path:driver_pageable:bytes,bytes,0,,4096,4096,4096,4096,0,1,passed,"),
             std::string("paths:slow_copies,count,0,,2,2,2,2,0,1,passed,"),
             std::string("paths:registrations,count,0,,3,3,3,3,0,1,passed,"),
         })
        EXPECT_NE(text.find("\n" + prefix + row), std::string::npos) << row << "\n" << text;
    std::ostringstream plain;
    write_csv(plain, sample_report());
    EXPECT_EQ(plain.str().find(",path"), std::string::npos) << plain.str();
}

TEST(PathsReport, JsonHasAPathsObjectAndReadsItBack) {
    const nlohmann::json j = report_to_json(report_with_paths());
    const auto &r = j["results"][0];
    ASSERT_TRUE(r["paths"].is_object()) << r.dump();
    EXPECT_EQ(r["paths"].size(), 2u);
    EXPECT_EQ(r["paths"]["staged"]["copies"], 65);
    EXPECT_EQ(r["paths"]["staged"]["bytes"], 1074790400ull);
    EXPECT_EQ(r["paths"]["staged"]["host_ns"], 251000000ull);
    EXPECT_EQ(r["paths"]["driver_pageable"]["bytes"], 4096);
    EXPECT_EQ(r["slow_copies"], 2);
    EXPECT_EQ(r["registrations"], 3);

    const Report back = report_from_json(j);
    const PathBreakdown &p = back.results[0].paths;
    ASSERT_TRUE(p.measured);
    ASSERT_EQ(p.paths.size(), 2u);
    EXPECT_EQ(p.paths[0].path, "staged"); // most bytes first, whatever the JSON key order
    EXPECT_EQ(p.paths[0].copies, 65u);
    EXPECT_EQ(p.paths[1].path, "driver_pageable");
    EXPECT_EQ(p.slow_copies, 2u);
    EXPECT_EQ(p.registrations, 3u);

    // Not measured: null, and read back as not measured.
    const nlohmann::json plain = report_to_json(sample_report());
    EXPECT_TRUE(plain["results"][0]["paths"].is_null());
    EXPECT_TRUE(plain["results"][0]["slow_copies"].is_null());
    EXPECT_TRUE(plain["results"][0]["registrations"].is_null());
    EXPECT_FALSE(report_from_json(plain).results[0].paths.measured);
}

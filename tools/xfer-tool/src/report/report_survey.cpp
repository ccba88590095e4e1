// SPDX-License-Identifier: Apache-2.0
// What a survey (cluster/survey.hpp) adds to each report format: the ranks (who ran where,
// on which device, and how it went) and the summary (each figure's slowest rank against the
// median). The results themselves are written as in any report, with their rank and host.
#include <cstdio>
#include <set>

#include "report/report.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

// The devices a rank's results ran on ("0", "0,1") and the PCIe link of the first.
struct RankDevices {
    std::string ordinals, name, link;
};

RankDevices rank_devices(const Report &report, int rank) {
    RankDevices d;
    std::set<int> seen;
    for (const WorkflowResult &r : report.results) {
        if (r.rank != rank || r.device.name.empty() || !seen.insert(r.device.ordinal).second) continue;
        d.ordinals += (d.ordinals.empty() ? "" : ",") + std::to_string(r.device.ordinal);
        if (d.name.empty()) {
            d.name = r.device.name;
            d.link = link_or_na(r.device);
        }
    }
    return d;
}

std::string rank_status(const RankInfo &r) {
    if (!r.error.empty()) return "error: " + r.error;
    return r.failed ? std::to_string(r.failed) + (r.failed == 1 ? " check" : " checks") + " failed" : "ok";
}

std::string with_unit(double value, const std::string &unit) { return format_value(value) + " " + unit; }

std::string ratio_text(double ratio) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", ratio);
    return text;
}

std::string slowest_text(const SurveyLine &l) {
    return "rank " + std::to_string(l.slowest_rank) + " on " + l.slowest_hostname + " (device " +
           std::to_string(l.slowest_device) + ")";
}

std::string survey_headline(const Survey &s) {
    const int hosts = s.hosts();
    return std::to_string(s.size) + (s.size == 1 ? " rank" : " ranks") + " on " + std::to_string(hosts) +
           (hosts == 1 ? " host" : " hosts") + ", each on its own device at the same time; rank 0 wrote this report";
}

} // namespace

void write_survey_ranks_table(std::ostream &out, const Report &report) {
    const Survey &s = *report.survey;
    out << "survey: " << survey_headline(s) << '\n';
    TextTable table({{"rank", TextTable::Align::right},
                     {"host"},
                     {"local rank", TextTable::Align::right},
                     {"device"},
                     {"PCIe link"},
                     {"started"},
                     {"results"}});
    for (const RankInfo &r : s.ranks) {
        const RankDevices d = rank_devices(report, r.rank);
        table.add_row({std::to_string(r.rank), r.hostname, std::to_string(r.local_rank),
                       d.name.empty() ? "-" : d.ordinals + ": " + d.name, d.link.empty() ? "-" : d.link, r.time,
                       rank_status(r)});
    }
    table.print(out, "   ");
}

void write_survey_summary_table(std::ostream &out, const Survey &s) {
    out << "== survey: each figure's slowest rank against the median of all ranks, at the largest size (GB/s: the "
           "lowest, ms: the highest)\n";
    if (s.summary.empty()) {
        out << "   no figure was measured on any rank\n";
        return;
    }
    TextTable table({{"workflow"},
                     {"backend"},
                     {"figure"},
                     {"size", TextTable::Align::right},
                     {"results", TextTable::Align::right},
                     {"median", TextTable::Align::right},
                     {"slowest"},
                     {"its median", TextTable::Align::right},
                     {"vs median", TextTable::Align::right}});
    for (const SurveyLine &l : s.summary)
        table.add_row({l.workflow, l.backend, l.figure, l.bytes ? format_size(l.bytes) : "", std::to_string(l.results),
                       with_unit(l.median, l.unit), slowest_text(l), with_unit(l.slowest, l.unit),
                       ratio_text(l.vs_median)});
    table.print(out, "   ");
}

void write_survey_csv_comments(std::ostream &out, const Report &report) {
    const Survey &s = *report.survey;
    out << "# survey: " << survey_headline(s) << "\n";
    for (const RankInfo &r : s.ranks) {
        const RankDevices d = rank_devices(report, r.rank);
        out << "# rank " << r.rank << ": " << r.hostname << ", local rank " << r.local_rank << ", device "
            << (d.name.empty() ? "-" : d.ordinals + " " + d.name) << ", started " << r.time << ", " << rank_status(r)
            << "\n";
    }
    for (const SurveyLine &l : s.summary)
        out << "# slowest: " << l.workflow << " on " << l.backend << ", " << l.figure
            << (l.bytes ? " at " + format_size(l.bytes) : "") << ": " << slowest_text(l) << " "
            << with_unit(l.slowest, l.unit) << " = " << ratio_text(l.vs_median) << " the median "
            << with_unit(l.median, l.unit) << " (" << l.results << (l.results == 1 ? " result" : " results") << ")\n";
}

nlohmann::json survey_to_json(const Report &report) {
    using nlohmann::json;
    const Survey &s = *report.survey;
    json ranks = json::array(), summary = json::array();
    for (const RankInfo &r : s.ranks)
        ranks.push_back({{"rank", r.rank},
                         {"hostname", r.hostname},
                         {"local_rank", r.local_rank},
                         {"cpu_model", r.cpu_model.empty() ? json(nullptr) : json(r.cpu_model)},
                         {"time", r.time},
                         {"failed", r.failed},
                         {"error", r.error.empty() ? json(nullptr) : json(r.error)}});
    for (const SurveyLine &l : s.summary)
        summary.push_back({{"workflow", l.workflow},
                           {"backend", l.backend},
                           {"figure", l.figure},
                           {"unit", l.unit},
                           {"bytes", l.bytes},
                           {"higher_is_better", l.higher_is_better},
                           {"results", l.results},
                           {"median", l.median},
                           {"slowest",
                            {{"rank", l.slowest_rank},
                             {"hostname", l.slowest_hostname},
                             {"device", l.slowest_device},
                             {"median", l.slowest}}},
                           {"vs_median", l.vs_median}});
    return {{"size", s.size}, {"hosts", s.hosts()}, {"ranks", ranks}, {"summary", summary}};
}

} // namespace xfer::tool

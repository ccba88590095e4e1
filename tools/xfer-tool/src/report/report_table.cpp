// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <map>
#include <set>

#include "compare.hpp"
#include "copy_paths.hpp"
#include "report/report.hpp"
#include "side_by_side.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {

const char *const kUnitsLegend =
    "Units: ms = milliseconds; GB/s = 10^9 bytes/s; x = ratio; sizes in KiB/MiB/GiB = 2^10/2^20/2^30 bytes.";

std::string link_or_na(const DeviceSummary &d) { return d.pcie_link.empty() ? "n/a" : d.pcie_link; }

namespace {

std::string device_line(const DeviceSummary &d) {
    std::string text = d.name + " (device " + std::to_string(d.ordinal) + ", PCIe link " + link_or_na(d);
    if (!d.driver_version.empty()) text += ", driver " + d.driver_version;
    if (!d.runtime_version.empty()) text += ", runtime " + d.runtime_version;
    if (d.numa_node >= 0) text += ", NUMA node " + std::to_string(d.numa_node);
    if (d.buffer_numa_node >= 0) text += ", host buffers on node " + std::to_string(d.buffer_numa_node);
    return text + ")";
}

void write_verification(std::ostream &out, const WorkflowResult &r) {
    if (!r.error.empty()) out << "   ERROR: " << r.error << '\n';
    switch (r.verification.state) {
    case Verification::State::passed:
        out << "   verification: passed (" << r.verification.detail << ")\n";
        break;
    case Verification::State::failed:
        out << "   verification: FAILED: " << r.verification.detail << '\n';
        break;
    case Verification::State::not_run:
        out << "   verification: not run\n";
        break;
    }
}

void write_long(std::ostream &out, const WorkflowResult &r) {
    TextTable table({{"figure"},
                     {"size", TextTable::Align::right},
                     {"unit"},
                     {"min", TextTable::Align::right},
                     {"median", TextTable::Align::right},
                     {"max", TextTable::Align::right},
                     {"mean", TextTable::Align::right},
                     {"stddev", TextTable::Align::right},
                     {"note"}});
    for (const Figure &f : r.figures) {
        std::string size = f.bytes ? format_size(f.bytes) : "";
        if (f.stats)
            table.add_row({f.name, size, f.unit, format_value(f.stats->min), format_value(f.stats->median),
                           format_value(f.stats->max), format_value(f.stats->mean), format_value(f.stats->stddev),
                           f.note});
        else
            table.add_row({f.name, size, f.unit, "-", "-", "-", "-", "-", f.note});
    }
    if (!table.empty()) table.print(out, "   ");
}

// Bandwidth, compact: one row per size; per direction xfer's GB/s, the raw call's and the
// ratio side by side (medians); each note once below the table instead of on every row.
void write_bandwidth_compact(std::ostream &out, const WorkflowResult &r) {
    struct Column {
        std::string figure, unit, header;
    };
    std::vector<Column> candidates;
    for (const char *d : {"h2d", "d2h"}) {
        candidates.push_back({d, "GB/s", std::string(d) + " GB/s"});
        candidates.push_back({raw_figure_name(d), "GB/s", "raw " + std::string(d)});
        candidates.push_back({ratio_figure_name(d), "x", std::string(d) + " xfer/raw"});
    }
    candidates.push_back({"bidirectional", "GB/s", "bidir GB/s"});
    std::vector<Column> columns;
    std::set<std::uint64_t> sizes;
    std::map<std::pair<std::string, std::string>, std::map<std::uint64_t, const Figure *>> cells;
    for (const Figure &f : r.figures) {
        cells[{f.name, f.unit}][f.bytes] = &f;
        sizes.insert(f.bytes);
    }
    for (const Column &c : candidates)
        if (cells.count({c.figure, c.unit})) columns.push_back(c);
    std::vector<TextTable::Column> headers = {{"size", TextTable::Align::right}};
    for (const Column &c : columns) headers.push_back({c.header, TextTable::Align::right});
    TextTable table(headers);
    // note text -> the columns it belongs to, so a note shared by columns prints once
    std::vector<std::pair<std::string, std::vector<std::string>>> notes;
    auto note = [&](const std::string &who, const std::string &text) {
        if (text.empty()) return;
        auto it = std::find_if(notes.begin(), notes.end(), [&](const auto &n) { return n.first == text; });
        if (it == notes.end()) it = notes.insert(notes.end(), {text, {}});
        if (std::find(it->second.begin(), it->second.end(), who) == it->second.end()) it->second.push_back(who);
    };
    for (std::uint64_t size : sizes) {
        std::vector<std::string> row = {format_size(size)};
        for (const Column &c : columns) {
            auto it = cells[{c.figure, c.unit}].find(size);
            const Figure *f = it == cells[{c.figure, c.unit}].end() ? nullptr : it->second;
            row.push_back(!f ? "" : f->stats ? format_value(f->stats->median) : "n/a");
            if (f) note(c.header, f->note);
        }
        table.add_row(row);
    }
    out << "   medians over the repeats (--long: every figure with min / max / mean / stddev and times)\n";
    table.print(out, "   ");
    for (const auto &[text, who] : notes) {
        std::string names;
        for (const std::string &w : who) names += (names.empty() ? "" : ", ") + w;
        out << "   note " << names << ": " << text << '\n';
    }
}

} // namespace

void write_table_header(std::ostream &out, const Report &report) {
    const RunInfo &run = report.run;
    out << "xfer-tool " << report.tool_version << " (libxfer " << report.library_version << ", commit "
        << (run.commit.empty() ? "unknown" : run.commit) << ")\n";
    if (!run.time.empty())
        out << "run " << run.time << " on " << (run.host.empty() ? "unknown host" : run.host) << ": "
            << run.command_line << '\n';
    if (!run.cpu_model.empty() || run.cpu_numa_node >= 0)
        out << "cpu " << (run.cpu_model.empty() ? "unknown" : run.cpu_model)
            << (run.cpu_numa_node >= 0 ? ", NUMA node " + std::to_string(run.cpu_numa_node) : "") << '\n';
    std::string config;
    for (const ConfigValue &c : run.config)
        if (c.section != "xfer-tool")
            config += " " + (c.section.empty() ? "" : c.section + ".") + c.name + "=" + c.value +
                      (c.source == "default" || c.source.empty() ? "" : " (" + c.source + ")");
    if (!config.empty()) out << "config" << config << '\n';
    if (!run.seed.empty()) out << "seed " << run.seed << '\n';
    if (report.survey) write_survey_ranks_table(out, report);
    out << kUnitsLegend << "\n\n";
}

void write_table_result(std::ostream &out, const WorkflowResult &r, TableStyle style) {
    out << "== " << r.workflow << " on " << r.backend;
    if (r.rank >= 0) out << ", rank " << r.rank << " on " << r.hostname;
    out << ": ";
    if (r.device.name.empty())
        out << "(backend not opened)\n";
    else
        out << device_line(r.device) << '\n';
    // peer's one-line "matrix" parameter is the matrix printed below.
    const bool peer = r.workflow == "peer";
    std::string parameters;
    for (const Parameter &p : r.parameters)
        if (!(peer && p.name == "matrix")) parameters += (parameters.empty() ? "" : "  ") + p.name + "=" + p.text;
    if (!parameters.empty()) out << "   " << parameters << '\n';
    if (peer) write_peer_matrices(out, r); // then every figure below, as for the other workflows
    if (r.workflow == "bandwidth" && style == TableStyle::compact && !r.figures.empty())
        write_bandwidth_compact(out, r);
    else
        write_long(out, r);
    if (r.paths.measured) out << "   paths: " << paths_text(r.paths) << '\n';
    write_verification(out, r);
    out << '\n';
}

void write_table(std::ostream &out, const Report &report, TableStyle style) {
    write_table_header(out, report);
    for (const WorkflowResult &r : report.results) write_table_result(out, r, style);
    if (!report.recommendations.empty()) write_comparison(out, report);
    if (report.survey) write_survey_summary_table(out, *report.survey);
    out << verdict_line(report) << '\n';
}

} // namespace xfer::tool

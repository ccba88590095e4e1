// SPDX-License-Identifier: Apache-2.0
// The bench's reports: one table line per target, and JSON (schema/results.schema.json,
// "bench").
#include "bench/bench_report.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "report/report.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {

Verdict verdict(const BenchRow &row) {
    if (!row.error.empty()) return Verdict::error;
    if (row.verification.state == Verification::State::failed) return Verdict::fail;
    if (row.verification.state != Verification::State::passed)
        return Verdict::error; // every row verifies; one that did not is broken
    if (!row.goal) return Verdict::smoke;
    if (!row.ratio) return Verdict::error;
    return row.goal->met(row.ratio->median) ? Verdict::pass : Verdict::fail;
}

const char *to_string(Verdict v) {
    switch (v) {
    case Verdict::pass:
        return "PASS";
    case Verdict::fail:
        return "FAIL";
    case Verdict::smoke:
        return "smoke";
    case Verdict::error:
        break;
    }
    return "ERROR";
}

namespace {

std::string with_unit(double v, const std::string &unit) {
    if (unit == "x") return format_value(v) + "x";
    if (unit == "%") return format_value(v) + "%";
    return format_value(v) + " " + unit;
}

std::string figure_text(const BenchFigure &f) { return f.stats ? with_unit(f.stats->median, f.unit) : "-"; }

} // namespace

std::string goal_text(const BenchRow &row) {
    if (!row.goal) return "(smoke)";
    std::ostringstream value; // as written in the table of targets: 0.9, not 0.9000
    value << row.goal->value;
    const std::string &unit = row.goal->unit;
    return std::string(row.goal->op == Goal::Op::at_least ? ">= " : "<= ") + value.str() +
           (unit == "x" || unit == "%" ? unit : " " + unit);
}

std::string ratio_text(const BenchRow &row) {
    if (!row.ratio) return "-";
    // Fixed decimals, fine enough for the goals: 0.934x, 12.41x, 3.2%, +0.040 us (a difference:
    // signed).
    const double v = row.ratio->median;
    char text[64];
    if (row.ratio_unit == "us")
        std::snprintf(text, sizeof text, "%+.3f us", v);
    else if (row.ratio_unit == "%")
        std::snprintf(text, sizeof text, "%.1f%%", v);
    else
        std::snprintf(text, sizeof text, std::fabs(v) < 10 ? "%.3f%s" : "%.2f%s", v, row.ratio_unit.c_str());
    return text;
}

std::map<Verdict, int> count_verdicts(const BenchReport &report) {
    std::map<Verdict, int> n;
    for (const BenchRow &row : report.rows) ++n[verdict(row)];
    return n;
}

std::string summary_line(const BenchReport &report) {
    const std::map<Verdict, int> n = count_verdicts(report);
    std::string text = std::to_string(report.rows.size()) + " targets:";
    bool first = true;
    for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::error, Verdict::smoke}) {
        auto it = n.find(v);
        if (it == n.end()) continue;
        text += std::string(first ? " " : ", ") + std::to_string(it->second) + " " + to_string(v);
        first = false;
    }
    return text;
}

void write_bench_table(std::ostream &out, const BenchReport &report) {
    out << "xfer-tool " << report.tool_version << " (libxfer " << report.library_version << ") bench: xfer side by "
        << "side with its reference, in one process\n";
    if (report.device)
        out << "device: " << report.device->name << ", " << report.device->kind << " device " << report.device->ordinal
            << ", PCIe link " << link_or_na(*report.device) << "\n";
    out << "medians of " << report.repeats << " repeats after " << report.warmup << " warm-up; ratio = median of "
        << "the per-pair ratios; seed " << report.seed << "\n"
        << "Units: GB/s = 10^9 bytes/s; ms, us = milliseconds, microseconds; x = ratio; sizes in KiB/MiB/GiB = "
           "2^10/2^20/2^30 bytes.\n\n";
    TextTable table({{"target"},
                     {"xfer", TextTable::Align::right},
                     {"reference", TextTable::Align::right},
                     {"ratio", TextTable::Align::right},
                     {"target"},
                     {"verdict"}});
    for (const BenchRow &row : report.rows)
        table.add_row({row.target, figure_text(row.xfer), figure_text(row.reference), ratio_text(row), goal_text(row),
                       to_string(verdict(row))});
    table.print(out);
    // What each FAIL or ERROR was, under the table: the table stays one line per target.
    bool header = false;
    for (const BenchRow &row : report.rows) {
        const Verdict v = verdict(row);
        if (v != Verdict::fail && v != Verdict::error) continue;
        if (!header) out << "\n";
        header = true;
        out << row.target << ": " << to_string(v) << ": ";
        if (!row.error.empty())
            out << row.error;
        else if (row.verification.state == Verification::State::failed)
            out << "verification failed: " << row.verification.detail;
        else if (row.verification.state != Verification::State::passed)
            out << "not verified";
        else if (!row.ratio)
            out << "no usable sample (below the timer's resolution)";
        else
            out << "ratio " << ratio_text(row) << " misses " << goal_text(row) << " (" << row.xfer.label << " "
                << figure_text(row.xfer) << ", " << row.reference.label << " " << figure_text(row.reference) << ")";
        out << "\n";
    }
    out << "\n" << summary_line(report) << "\n";
}

namespace {

using nlohmann::json;

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json stats_json(const std::optional<Stats> &s, json j) {
    if (s) {
        j["min"] = number_or_null(s->min);
        j["median"] = number_or_null(s->median);
        j["max"] = number_or_null(s->max);
        j["samples"] = s->samples;
    } else {
        j["min"] = j["median"] = j["max"] = nullptr;
        j["samples"] = 0;
    }
    return j;
}

json figure_json(const BenchFigure &f) { return stats_json(f.stats, {{"label", f.label}, {"unit", f.unit}}); }

json row_json(const BenchRow &row) {
    json goal = nullptr;
    if (row.goal)
        goal = {{"op", row.goal->op == Goal::Op::at_least ? ">=" : "<="},
                {"value", row.goal->value},
                {"unit", row.goal->unit}};
    return {
        {"target", row.target},
        {"backend", row.backend},
        {"summary", row.summary},
        {"bytes", row.bytes},
        {"xfer", figure_json(row.xfer)},
        {"reference", figure_json(row.reference)},
        {"ratio", stats_json(row.ratio, {{"unit", row.ratio_unit}, {"note", row.ratio_note}})},
        {"goal", goal},
        {"verdict", to_string(verdict(row))},
        {"verification",
         {{"status", to_string(row.verification.state)},
          {"detail", row.verification.detail},
          {"checked", row.verification.checked}}},
        {"error", row.error.empty() ? json(nullptr) : json(row.error)},
    };
}

json device_json(const std::optional<DeviceSummary> &d) { return d ? device_to_json(*d) : json(nullptr); }

} // namespace

nlohmann::json bench_to_json(const BenchReport &report) {
    // The common envelope of every xfer-tool report, with no workflow results.
    Report envelope;
    envelope.tool_version = report.tool_version;
    envelope.library_version = report.library_version;
    envelope.run = report.run;
    json j = report_to_json(envelope);
    j["units"]["us"] = "microseconds";
    json rows = json::array();
    for (const BenchRow &row : report.rows) rows.push_back(row_json(row));
    json counts = json::object();
    for (const auto &[v, n] : count_verdicts(report)) counts[to_string(v)] = n;
    j["bench"] = {{"device", device_json(report.device)},
                  {"repeats", report.repeats},
                  {"warmup", report.warmup},
                  {"seed", report.seed},
                  {"verdicts", counts},
                  {"targets", rows}};
    return j;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "diff.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "report/report.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

double spread(const Stats &s) {
    if (std::isfinite(s.stddev)) return s.stddev;
    return (s.max - s.min) / 2.0;
}

std::string percent(double change) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f%%", change * 100.0);
    return text;
}

void describe(std::ostream &out, const char *label, const std::string &name, const Report &r) {
    out << label << " " << name << ": xfer-tool " << r.tool_version << ", libxfer " << r.library_version << ", commit "
        << (r.run.commit.empty() ? "unknown" : r.run.commit);
    if (!r.run.time.empty()) out << ", " << r.run.time;
    if (!r.run.host.empty()) out << " on " << r.run.host;
    // The real device when there is one (compare on a GPU machine may include the host backend).
    const WorkflowResult *shown = nullptr;
    for (const WorkflowResult &res : r.results)
        if (!res.device.name.empty() && (!shown || (shown->device.kind == "host" && res.device.kind != "host")))
            shown = &res;
    if (shown) {
        const DeviceSummary &d = shown->device;
        out << ", " << d.name;
        if (!d.pcie_link.empty()) out << " (" << d.pcie_link << ")";
        if (!d.driver_version.empty()) out << ", driver " << d.driver_version;
    }
    out << '\n';
}

} // namespace

bool figure_changed(const Stats &a, const Stats &b, double min_relative) {
    const double delta = std::fabs(b.median - a.median);
    const double combined = std::sqrt(spread(a) * spread(a) + spread(b) * spread(b));
    return delta > 2.0 * combined && delta > min_relative * std::fabs(a.median);
}

std::vector<FigureChange> compare_reports(const Report &a, const Report &b) {
    // The device is part of the key: a --device all report holds each backend once per device.
    using Key = std::tuple<std::string, std::string, int, std::string, std::string, std::uint64_t>;
    std::map<Key, const Stats *> first;
    for (const WorkflowResult &r : a.results)
        for (const Figure &f : r.figures)
            if (f.stats)
                first.emplace(Key{r.workflow, r.backend, r.device.ordinal, f.name, f.unit, f.bytes}, &*f.stats);
    std::vector<FigureChange> changes;
    for (const WorkflowResult &r : b.results)
        for (const Figure &f : r.figures) {
            if (!f.stats) continue;
            auto it = first.find(Key{r.workflow, r.backend, r.device.ordinal, f.name, f.unit, f.bytes});
            if (it == first.end()) continue;
            const Stats &sa = *it->second, &sb = *f.stats;
            // Device 0 (the usual single-device report) keeps the plain backend name.
            const std::string backend =
                r.device.ordinal == 0 ? r.backend : r.backend + " (device " + std::to_string(r.device.ordinal) + ")";
            FigureChange c{r.workflow, backend, f.name, f.unit, f.bytes, sa.median, sb.median, 0, false, false};
            c.change = sa.median != 0 ? (sb.median - sa.median) / sa.median : 0.0;
            c.significant = figure_changed(sa, sb);
            const bool higher_is_better = f.unit == "GB/s" || f.unit == "x";
            c.better = higher_is_better ? sb.median > sa.median : sb.median < sa.median;
            changes.push_back(c);
        }
    return changes;
}

int write_diff(std::ostream &out, const Report &a, const Report &b, const std::string &name_a,
               const std::string &name_b, bool all) {
    describe(out, "A", name_a, a);
    describe(out, "B", name_b, b);
    const std::vector<FigureChange> changes = compare_reports(a, b);
    TextTable table({{"workflow"},
                     {"backend"},
                     {"figure"},
                     {"size", TextTable::Align::right},
                     {"unit"},
                     {"A median", TextTable::Align::right},
                     {"B median", TextTable::Align::right},
                     {"change", TextTable::Align::right},
                     {""}});
    int significant = 0, worse = 0;
    for (const FigureChange &c : changes) {
        if (c.significant) ++significant;
        if (c.significant && !c.better) ++worse;
        if (!c.significant && !all) continue;
        table.add_row({c.workflow, c.backend, c.figure, c.bytes ? format_size(c.bytes) : "", c.unit,
                       format_value(c.before), format_value(c.after), percent(c.change),
                       c.significant ? (c.better ? "better" : "WORSE") : "within spread"});
    }
    out << "\n";
    if (!table.empty()) table.print(out);
    out << "\n"
        << significant << " of " << changes.size()
        << " figures changed beyond their spread (|B - A| > 2 x combined stddev and > 2%): " << worse << " worse, "
        << significant - worse << " better\n";
    return worse;
}

Report read_report_file(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read '" + path + "'");
    nlohmann::json json;
    try {
        in >> json;
    } catch (const nlohmann::json::exception &e) {
        throw std::runtime_error("'" + path + "' is not valid JSON: " + e.what());
    }
    try {
        return report_from_json(json);
    } catch (const std::exception &e) {
        throw std::runtime_error("'" + path + "': " + e.what());
    }
}

} // namespace xfer::tool

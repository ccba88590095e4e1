// SPDX-License-Identifier: Apache-2.0
// The peer workflow's GB/s as a source x destination matrix, the layout nvbandwidth prints:
// one row per source device, one column per destination device, '-' on the diagonal.
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "report/report.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

using Cell = std::pair<int, int>; // source, destination

// "peer 0->1" (prefix "peer ") -> {0, 1}; false for another figure.
bool parse_pair(const std::string &name, const std::string &prefix, Cell &cell) {
    if (name.compare(0, prefix.size(), prefix) != 0) return false;
    int from = -1, to = -1, used = 0;
    const std::string rest = name.substr(prefix.size());
    if (std::sscanf(rest.c_str(), "%d->%d%n", &from, &to, &used) != 2 || used != static_cast<int>(rest.size()))
        return false;
    if (from < 0 || to < 0) return false;
    cell = {from, to};
    return true;
}

void write_matrix(std::ostream &out, const std::string &title, const std::map<Cell, const Figure *> &cells) {
    std::set<int> devices;
    for (const auto &[cell, figure] : cells) {
        devices.insert(cell.first);
        devices.insert(cell.second);
    }
    std::vector<TextTable::Column> columns = {{"src\\dst", TextTable::Align::right}};
    for (int d : devices) columns.push_back({std::to_string(d), TextTable::Align::right});
    TextTable table(columns);
    for (int from : devices) {
        std::vector<std::string> row = {std::to_string(from)};
        for (int to : devices) {
            const auto it = cells.find({from, to});
            if (from == to)
                row.push_back("-");
            else if (it == cells.end() || !it->second->stats)
                row.push_back("n/a");
            else
                row.push_back(format_value(it->second->stats->median));
        }
        table.add_row(row);
    }
    out << "   " << title << '\n';
    table.print(out, "   ");
}

} // namespace

void write_peer_matrices(std::ostream &out, const WorkflowResult &r) {
    std::map<Cell, const Figure *> xfer, raw;
    bool raw_measured = false;
    for (const Figure &f : r.figures) {
        if (f.unit != "GB/s") continue;
        Cell cell;
        if (parse_pair(f.name, "peer ", cell)) {
            xfer[cell] = &f;
        } else if (parse_pair(f.name, "raw peer ", cell)) {
            raw[cell] = &f;
            raw_measured = raw_measured || f.stats.has_value();
        }
    }
    if (xfer.empty()) return;
    write_matrix(out,
                 "GB/s, xfer_memcpy_peer_async (medians; row = source device, column = destination device):", xfer);
    if (!raw_measured) return;
    std::string call = "the raw call";
    for (const Parameter &p : r.parameters)
        if (p.name == "raw call") call = p.text;
    write_matrix(out, "GB/s, " + call + " (medians; row = source device, column = destination device):", raw);
}

} // namespace xfer::tool

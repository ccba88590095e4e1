// SPDX-License-Identifier: Apache-2.0
#include "compare.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "copy_paths.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

const Figure *find_figure(const WorkflowResult &r, const std::string &name, const std::string &unit) {
    for (const Figure &f : r.figures)
        if (f.name == name && f.unit == unit && f.stats) return &f;
    return nullptr;
}

struct Candidate {
    std::string backend;
    std::string method; // what achieved it, when a workflow measures several
    double ms;
    std::uint64_t bytes;
};

struct Pattern {
    const char *pattern;
    const char *workflow;
    std::vector<const char *> figures; // the best of these counts for a backend
    const char *what;
    const char *size_phrase; // joins `what` and the size
};

const std::vector<Pattern> &patterns() {
    static const std::vector<Pattern> list = {
        {"large one-off transfers", "roundtrip", {"device total"}, "roundtrip h2d + kernel + d2h", " of "},
        {"streaming", "overlap", {"pipelined"}, "pipelined copy in / compute / copy out", " of "},
        {"many small copies", "batching", {"one call each", "one batch call"}, "small copies", " totalling "},
        {"data read once by a kernel", "access", {"read once"}, "data read once from where it starts", ", "},
    };
    return list;
}

Recommendation recommend_pattern(const Pattern &p, const std::vector<WorkflowResult> &results) {
    // The host backend emulates a device in host memory: a fine reference, never advice for a
    // machine that has a real device to move data to.
    const bool have_real_device =
        std::any_of(results.begin(), results.end(), [](const WorkflowResult &r) { return r.device.kind != "host"; });
    std::vector<Candidate> candidates;
    for (const WorkflowResult &r : results) {
        if (r.workflow != p.workflow || !r.ok()) continue; // a result that did not verify recommends nothing
        if (have_real_device && r.device.kind == "host") continue;
        std::optional<Candidate> best;
        for (const char *name : p.figures)
            if (const Figure *f = find_figure(r, name, "ms"); f && (!best || f->stats->median < best->ms))
                best = Candidate{r.backend, p.figures.size() > 1 ? name : "", f->stats->median, f->bytes};
        if (best) candidates.push_back(*best);
    }
    Recommendation rec{p.pattern, "", ""};
    if (candidates.empty()) {
        rec.basis = std::string("no verified ") + p.workflow + " result";
        return rec;
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate &a, const Candidate &b) { return a.ms < b.ms; });
    rec.backend = candidates.front().backend;
    rec.basis = std::string(p.what) +
                (candidates.front().bytes ? p.size_phrase + format_size(candidates.front().bytes) : "") + ", median:";
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const Candidate &c = candidates[i];
        rec.basis += (i ? ", " : " ") + c.backend + " " + format_value(c.ms) + " ms" +
                     (c.method.empty() ? "" : " (" + c.method + ")");
    }
    return rec;
}

// Bandwidth sweeps would swamp the table: keep the largest size's GB/s and xfer / raw ratio,
// and the smallest size's time (the latency end), per direction.
bool keep_row(const WorkflowResult &r, const Figure &f,
              const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> &range) {
    if (r.workflow != "bandwidth") return true;
    auto it = range.find(f.name);
    if (it == range.end()) return false;
    return ((f.unit == "GB/s" || f.unit == "x") && f.bytes == it->second.second) ||
           (f.unit == "ms" && f.bytes == it->second.first);
}

} // namespace

std::vector<Recommendation> recommend(const std::vector<WorkflowResult> &results) {
    std::vector<Recommendation> recs;
    for (const Pattern &p : patterns()) recs.push_back(recommend_pattern(p, results));
    return recs;
}

void write_comparison(std::ostream &out, const Report &report) {
    std::vector<std::string> backends;
    for (const WorkflowResult &r : report.results)
        if (std::find(backends.begin(), backends.end(), r.backend) == backends.end()) backends.push_back(r.backend);

    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> bandwidth_range; // name -> (min, max) bytes
    for (const WorkflowResult &r : report.results)
        if (r.workflow == "bandwidth")
            for (const Figure &f : r.figures) {
                auto [it, inserted] = bandwidth_range.emplace(f.name, std::make_pair(f.bytes, f.bytes));
                it->second.first = std::min(it->second.first, f.bytes);
                it->second.second = std::max(it->second.second, f.bytes);
            }

    // Rows in first-seen order, keyed by (workflow, figure, unit, bytes).
    using Key = std::tuple<std::string, std::string, std::string, std::uint64_t>;
    std::vector<Key> rows;
    std::map<Key, std::map<std::string, std::string>> cells;
    std::vector<std::string> workflows;
    std::map<std::string, std::map<std::string, std::string>> verdicts;
    for (const WorkflowResult &r : report.results) {
        if (std::find(workflows.begin(), workflows.end(), r.workflow) == workflows.end())
            workflows.push_back(r.workflow);
        verdicts[r.workflow][r.backend] = !r.error.empty() ? "error" : to_string(r.verification.state);
        for (const Figure &f : r.figures) {
            if (!keep_row(r, f, bandwidth_range)) continue;
            Key key{r.workflow, f.name, f.unit, f.bytes};
            if (!cells.count(key)) rows.push_back(key);
            cells[key][r.backend] = f.stats ? format_value(f.stats->median) : "n/a";
        }
    }

    std::vector<TextTable::Column> columns = {{"workflow"}, {"figure"}, {"size", TextTable::Align::right}, {"unit"}};
    for (const std::string &b : backends) columns.push_back({b, TextTable::Align::right});
    TextTable table(columns);
    for (const std::string &w : workflows) {
        for (const Key &key : rows) {
            if (std::get<0>(key) != w) continue;
            std::vector<std::string> cellsrow = {
                w, std::get<1>(key), std::get<3>(key) ? format_size(std::get<3>(key)) : "", std::get<2>(key)};
            for (const std::string &b : backends) {
                auto it = cells[key].find(b);
                cellsrow.push_back(it == cells[key].end() ? "" : it->second);
            }
            table.add_row(cellsrow);
        }
        std::vector<std::string> verdict = {w, "verification", "", ""};
        for (const std::string &b : backends) {
            auto it = verdicts[w].find(b);
            verdict.push_back(it == verdicts[w].end() ? "" : it->second);
        }
        table.add_row(verdict);
        // Which path did most of the work: the reason behind a backend's figures.
        std::vector<std::string> paths_row = {w, "paths", "", ""};
        for (const std::string &b : backends) {
            auto it = std::find_if(report.results.begin(), report.results.end(),
                                   [&](const WorkflowResult &r) { return r.workflow == w && r.backend == b; });
            paths_row.push_back(it == report.results.end() ? "" : top_paths_text(it->paths, 1));
        }
        table.add_row(paths_row);
    }
    out << "== comparison (medians; n/a: nothing to measure on that backend; paths: the path that moved the most "
           "bytes)\n";
    table.print(out, "   ");
    out << "\n== paths (every workflow's copies, by bytes)\n";
    for (const std::string &b : backends) {
        PathBreakdown sum;
        for (const WorkflowResult &r : report.results) {
            if (r.backend != b || !r.paths.measured) continue;
            sum.measured = true;
            for (const PathUse &p : r.paths.paths) sum.add(p);
            sum.slow_copies += r.paths.slow_copies;
            sum.registrations += r.paths.registrations;
        }
        out << "   " << b << ": ";
        if (!sum.measured) {
            out << "not measured (the backend did not open)\n";
            continue;
        }
        out << top_paths_text(sum, 3);
        if (!sum.paths.empty()) {
            const std::uint64_t copies = sum.copies();
            out << " (" << format_size(sum.bytes()) << " in " << copies << (copies == 1 ? " copy" : " copies");
            if (sum.slow_copies) out << "; " << sum.slow_copies << " slow";
            if (sum.registrations)
                out << "; " << sum.registrations << (sum.registrations == 1 ? " registration" : " registrations");
            out << ")";
        }
        out << '\n';
    }
    out << "\n== recommendations\n";
    for (const Recommendation &rec : report.recommendations)
        out << "   " << rec.pattern << ": " << (rec.backend.empty() ? "no recommendation" : rec.backend) << " ("
            << rec.basis << ")\n";
}

} // namespace xfer::tool

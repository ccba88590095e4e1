// SPDX-License-Identifier: Apache-2.0
// Merging the ranks' reports on rank 0 and the survey's summary: plain data in, plain data
// out, so the unit tests cover them without MPI.
#include "cluster/survey.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "stats.hpp"

namespace xfer::tool {

int Survey::hosts() const {
    std::set<std::string> names;
    for (const RankInfo &r : ranks) names.insert(r.hostname);
    return static_cast<int>(names.size());
}

std::string rank_file_path(const std::string &path, int rank) {
    const std::string tag = ".rank" + std::to_string(rank);
    const std::size_t slash = path.find_last_of('/');
    const std::size_t dot = path.find_last_of('.');
    // A dot that starts the file name (".trace") or sits in a folder name is no extension.
    const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
    if (dot == std::string::npos || dot <= name_start) return path + tag;
    return path.substr(0, dot) + tag + path.substr(dot);
}

Report merge_survey(const Report &base, int size, const std::vector<RankReport> &ranks) {
    Report merged;
    merged.tool_version = base.tool_version;
    merged.library_version = base.library_version;
    merged.run = base.run;
    Survey survey;
    survey.size = size;
    // Groups of (workflow, backend) in the order they first appear, rank 0's order first: the
    // table then shows one workflow's ranks one below the other.
    std::vector<std::pair<std::string, std::string>> groups;
    for (const RankReport &rank : ranks)
        for (const WorkflowResult &r : rank.results)
            if (std::find(groups.begin(), groups.end(), std::make_pair(r.workflow, r.backend)) == groups.end())
                groups.emplace_back(r.workflow, r.backend);
    for (const auto &group : groups)
        for (const RankReport &rank : ranks)
            for (const WorkflowResult &r : rank.results)
                if (std::make_pair(r.workflow, r.backend) == group) {
                    merged.results.push_back(r);
                    merged.results.back().rank = rank.info.rank;
                    merged.results.back().hostname = rank.info.hostname;
                }
    for (const RankReport &rank : ranks) {
        RankInfo info = rank.info;
        info.failed = 0;
        for (const WorkflowResult &r : rank.results)
            if (!r.error.empty() || r.verification.state == Verification::State::failed) ++info.failed;
        survey.ranks.push_back(std::move(info));
    }
    survey.summary = summarize_survey(merged.results);
    merged.survey = std::move(survey);
    return merged;
}

namespace {

bool is_raw_call(const Figure &f) { return f.name.rfind("raw ", 0) == 0; }

bool has_number(const Figure &f) { return f.stats && f.stats->samples > 0 && std::isfinite(f.stats->median); }

} // namespace

std::vector<SurveyLine> summarize_survey(const std::vector<WorkflowResult> &results) {
    // One entry per (workflow, backend), in order of appearance; inside, the figures in the
    // order the workflow reports them.
    using FigureKey = std::pair<std::string, std::string>; // name, unit
    struct Group {
        std::string workflow, backend;
        std::vector<FigureKey> figures;
        std::map<FigureKey, std::uint64_t> largest;
        std::map<FigureKey, std::vector<std::pair<const WorkflowResult *, double>>> values;
    };
    std::vector<Group> groups;
    for (const WorkflowResult &r : results) {
        if (!r.error.empty() || r.verification.state == Verification::State::failed) continue;
        auto g = std::find_if(groups.begin(), groups.end(),
                              [&](const Group &x) { return x.workflow == r.workflow && x.backend == r.backend; });
        if (g == groups.end()) g = groups.insert(groups.end(), Group{r.workflow, r.backend, {}, {}, {}});
        for (const Figure &f : r.figures) {
            if (!has_number(f) || is_raw_call(f) || (f.unit != "GB/s" && f.unit != "ms")) continue;
            const FigureKey key{f.name, f.unit};
            if (std::find(g->figures.begin(), g->figures.end(), key) == g->figures.end()) g->figures.push_back(key);
            g->largest[key] = std::max(g->largest[key], f.bytes);
        }
    }
    // Second pass: the values at each figure's largest size (a rank that measured fewer sizes
    // does not count for a size it lacks).
    for (const WorkflowResult &r : results) {
        if (!r.error.empty() || r.verification.state == Verification::State::failed) continue;
        for (Group &g : groups) {
            if (g.workflow != r.workflow || g.backend != r.backend) continue;
            for (const Figure &f : r.figures) {
                const FigureKey key{f.name, f.unit};
                auto largest = g.largest.find(key);
                if (largest != g.largest.end() && has_number(f) && !is_raw_call(f) && f.bytes == largest->second)
                    g.values[key].emplace_back(&r, f.stats->median);
            }
        }
    }
    std::vector<SurveyLine> lines;
    for (const Group &g : groups) {
        std::vector<SurveyLine> candidates;
        for (const FigureKey &key : g.figures) {
            const auto &values = g.values.at(key);
            SurveyLine line;
            line.workflow = g.workflow;
            line.backend = g.backend;
            line.figure = key.first;
            line.unit = key.second;
            line.bytes = g.largest.at(key);
            line.higher_is_better = key.second == "GB/s";
            line.results = static_cast<int>(values.size());
            std::vector<double> medians;
            for (const auto &v : values) medians.push_back(v.second);
            line.median = summarize(medians).median;
            // The first of equal values wins: the lowest rank, which reads naturally.
            auto slowest = values.begin();
            for (auto it = values.begin(); it != values.end(); ++it)
                if (line.higher_is_better ? it->second < slowest->second : it->second > slowest->second) slowest = it;
            line.slowest_rank = slowest->first->rank;
            line.slowest_hostname = slowest->first->hostname;
            line.slowest_device = slowest->first->device.ordinal;
            line.slowest = slowest->second;
            line.vs_median = line.median != 0.0 ? line.slowest / line.median : 0.0;
            candidates.push_back(std::move(line));
        }
        const bool any_rate =
            std::any_of(candidates.begin(), candidates.end(), [](const SurveyLine &l) { return l.higher_is_better; });
        if (any_rate) {
            for (SurveyLine &l : candidates)
                if (l.higher_is_better) lines.push_back(std::move(l));
        } else if (!candidates.empty()) {
            // A workflow of times alone (overlap, sync-async) has many; the longest covers the
            // most of its work (overlap's pipelined pass), and one line keeps the summary short.
            lines.push_back(
                *std::max_element(candidates.begin(), candidates.end(),
                                  [](const SurveyLine &a, const SurveyLine &b) { return a.median < b.median; }));
        }
    }
    return lines;
}

} // namespace xfer::tool

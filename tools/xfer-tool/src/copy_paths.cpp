// SPDX-License-Identifier: Apache-2.0
#include "copy_paths.hpp"

#include <algorithm>
#include <cmath>

#include "units.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {

void PathBreakdown::add(const PathUse &use) {
    auto it = std::find_if(paths.begin(), paths.end(), [&](const PathUse &p) { return p.path == use.path; });
    if (it == paths.end()) {
        paths.push_back(use);
    } else {
        it->copies += use.copies;
        it->bytes += use.bytes;
        it->host_ns += use.host_ns;
    }
    // Most bytes first; copies, then the name, break ties so the order is the same every run.
    std::sort(paths.begin(), paths.end(), [](const PathUse &a, const PathUse &b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        if (a.copies != b.copies) return a.copies > b.copies;
        return a.path < b.path;
    });
}

std::uint64_t PathBreakdown::copies() const {
    std::uint64_t n = 0;
    for (const PathUse &p : paths) n += p.copies;
    return n;
}

std::uint64_t PathBreakdown::bytes() const {
    std::uint64_t n = 0;
    for (const PathUse &p : paths) n += p.bytes;
    return n;
}

void reset_copy_paths(const Context &ctx) { check(xfer_context_reset_stats(ctx.get()), "xfer_context_reset_stats"); }

void add_copy_paths(PathBreakdown &out, const Context &ctx) {
    xfer_context_stats stats{};
    stats.struct_size = sizeof stats;
    check(xfer_context_get_stats(ctx.get(), &stats), "xfer_context_get_stats");
    out.measured = true;
    out.slow_copies += stats.slow_copies;
    out.registrations += stats.registrations;
    // path_count: a library older than this header fills fewer paths than XFER_PATH_COUNT.
    const std::uint32_t count = std::min<std::uint32_t>(stats.path_count, XFER_PATH_COUNT);
    for (std::uint32_t p = 0; p < count; ++p) {
        const xfer_path_stats &s = stats.paths[p];
        if (s.copies == 0 && s.bytes == 0) continue;
        out.add({xfer_copy_path_name(static_cast<xfer_copy_path>(p)), s.copies, s.bytes, s.host_ns});
    }
}

std::string paths_text(const PathBreakdown &paths) {
    std::string text;
    for (const PathUse &p : paths.paths)
        text += (text.empty() ? "" : ", ") + p.path + " " + std::to_string(p.copies) +
                (p.copies == 1 ? " copy " : " copies ") + format_size(p.bytes);
    if (text.empty()) text = "no copies";
    if (paths.slow_copies)
        text += "; " + std::to_string(paths.slow_copies) + (paths.slow_copies == 1 ? " slow copy" : " slow copies");
    if (paths.registrations)
        text += "; " + std::to_string(paths.registrations) +
                (paths.registrations == 1 ? " registration" : " registrations");
    return text;
}

std::string top_paths_text(const PathBreakdown &paths, std::size_t top) {
    if (!paths.measured) return "";
    if (paths.paths.empty()) return "no copies";
    const std::uint64_t total = paths.bytes();
    std::string text;
    for (std::size_t i = 0; i < paths.paths.size() && i < top; ++i) {
        const PathUse &p = paths.paths[i];
        std::string share;
        if (paths.paths.size() == 1) {
            share = "100%";
        } else if (total == 0) {
            share = std::to_string(p.copies) + (p.copies == 1 ? " copy" : " copies");
        } else {
            // A path that moved less than half a percent still did some of the work: "<1%", and
            // never "100%" beside another path.
            const double percent = 100.0 * static_cast<double>(p.bytes) / static_cast<double>(total);
            const long rounded = std::min(99L, std::lround(percent));
            share = percent < 0.5 ? "<1%" : std::to_string(rounded) + "%";
        }
        text += (text.empty() ? "" : ", ") + p.path + " " + share;
    }
    if (paths.paths.size() > top) text += ", +" + std::to_string(paths.paths.size() - top) + " more";
    return text;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "bench/targets.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <stdexcept>

#include "bench/measures.hpp"
#include "run_options.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// "64KiB": a size as it appears in a target name.
std::string size_tag(std::uint64_t bytes) {
    std::string s = format_size(bytes);
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
}

std::string dir_tag(xfer_direction dir) { return dir == XFER_TO_DEVICE ? "h2d" : "d2h"; }

Goal at_least(double v) { return {Goal::Op::at_least, v, "x"}; }
Goal at_most(double v, const char *unit) { return {Goal::Op::at_most, v, unit}; }

constexpr xfer_direction kDirections[] = {XFER_TO_DEVICE, XFER_TO_HOST};

// Bytes of the small copy whose host cost the overhead and observer rows measure: a 4-byte copy.
constexpr std::size_t kSmallCopy = 4;

void add_copy_vs_raw(std::vector<TargetSpec> &t, const std::string &backend, const std::vector<std::uint64_t> &sizes,
                     std::optional<double> goal, const std::string &origin) {
    for (xfer_direction dir : kDirections)
        for (std::uint64_t size : sizes)
            t.push_back({backend + "-raw-" + dir_tag(dir) + "-" + size_tag(size), backend,
                         "xfer_copy_async vs the raw copy on the same " + backend + " memory" + origin, size,
                         goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt,
                         [=](BenchEnv &env, BenchRow &row) { measure_copy_vs_raw(env, row, backend, dir, size); }});
}

// Copies between other work: the copy after an idle gap of `gap_ms` against itself back to back.
void add_idle_gap(std::vector<TargetSpec> &t, const std::string &backend, const std::vector<std::uint64_t> &sizes,
                  int gap_ms, std::optional<double> goal, const std::string &origin) {
    for (xfer_direction dir : kDirections)
        for (std::uint64_t size : sizes)
            t.push_back(
                {backend + "-gap-" + dir_tag(dir) + "-" + size_tag(size), backend,
                 "xfer_copy_async after " + std::to_string(gap_ms) +
                     " ms idle vs the same copy back to back (a copy between other work)" + origin,
                 size, goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt,
                 [=](BenchEnv &env, BenchRow &row) { measure_after_idle_gap(env, row, backend, dir, size, gap_ms); }});
}

// Copies after other work of the program: the copy after reading memory it does not touch
// (its source has left the caches) against itself back to back.
void add_host_work_gap(std::vector<TargetSpec> &t, const std::string &backend, const std::vector<std::uint64_t> &sizes,
                       std::uint64_t evict_bytes, std::optional<double> goal, const std::string &origin) {
    for (xfer_direction dir : kDirections)
        for (std::uint64_t size : sizes)
            t.push_back({backend + "-work-gap-" + dir_tag(dir) + "-" + size_tag(size), backend,
                         "xfer_copy_async after reading " + size_tag(evict_bytes) +
                             " of other memory vs the same copy back to back" + origin,
                         size, goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt,
                         [=](BenchEnv &env, BenchRow &row) {
                             measure_after_host_work(env, row, backend, dir, size, evict_bytes);
                         }});
}

// User memory the three ways (measure_user_memory.cpp): a one-off copy against the raw call's
// one-off copy (each of a fresh array) and against `reference`'s buffers, a loop's array copied 20 times against
// `reference`'s buffers from the third copy on, and many small pieces against the raw call.
struct UserMemoryGoals {
    std::optional<double> one_off_vs_raw, one_off_vs_reference, reuse_vs_reference, small_vs_raw;
};
void add_user_ways(std::vector<TargetSpec> &t, const std::string &backend, const std::string &reference,
                   const std::vector<std::uint64_t> &one_off_sizes, const std::vector<std::uint64_t> &large_sizes,
                   std::uint64_t piece, std::size_t pieces, const UserMemoryGoals &g, const std::string &origin) {
    const auto goal = [](std::optional<double> v) { return v ? std::optional<Goal>(at_least(*v)) : std::nullopt; };
    constexpr int kCopies = 20, kTimedFrom = 3;
    for (xfer_direction dir : kDirections) {
        for (std::uint64_t size : one_off_sizes)
            t.push_back(
                {backend + "-user-once-" + dir_tag(dir) + "-" + size_tag(size), backend,
                 "xfer_memcpy_async, the first copy of a user array, vs the raw call's first copy of one" + origin,
                 size, goal(g.one_off_vs_raw),
                 [=](BenchEnv &env, BenchRow &row) { measure_user_one_off_vs_raw(env, row, backend, dir, size); }});
        for (std::uint64_t size : large_sizes)
            t.push_back(
                {backend + "-user-once-vs-" + reference + "-" + dir_tag(dir) + "-" + size_tag(size), backend,
                 "xfer_memcpy_async, the first copy of a user array, vs a " + reference + " buffer's copy" + origin,
                 size, goal(g.one_off_vs_reference), [=](BenchEnv &env, BenchRow &row) {
                     measure_user_one_off_vs_backend(env, row, backend, reference, dir, size);
                 }});
        for (std::uint64_t size : large_sizes)
            t.push_back({backend + "-user-reuse" + std::to_string(kCopies) + "-" + dir_tag(dir) + "-" + size_tag(size),
                         backend,
                         "one user array copied " + std::to_string(kCopies) + " times with xfer_memcpy_async vs a " +
                             reference + " buffer copied as often, copies " + std::to_string(kTimedFrom) + "-" +
                             std::to_string(kCopies) + " timed" + origin,
                         size, goal(g.reuse_vs_reference), [=](BenchEnv &env, BenchRow &row) {
                             measure_user_reuse(env, row, backend, reference, dir, size, kCopies, kTimedFrom);
                         }});
        t.push_back({backend + "-user-pieces-" + dir_tag(dir) + "-" + size_tag(piece), backend,
                     std::to_string(pieces) + " copies of " + size_tag(piece) +
                         " pieces of a user array vs the raw copy per piece" + origin,
                     piece * pieces, goal(g.small_vs_raw),
                     [=](BenchEnv &env, BenchRow &row) { measure_user_small(env, row, backend, dir, piece, pieces); }});
    }
}

// A buffer shared with another process: the importer's copies against the exporter's.
void add_import(std::vector<TargetSpec> &t, const std::string &backend, const std::vector<std::uint64_t> &sizes,
                std::optional<double> goal, const std::string &origin) {
    for (xfer_direction dir : kDirections)
        for (std::uint64_t size : sizes)
            t.push_back(
                {backend + "-import-" + dir_tag(dir) + "-" + size_tag(size), backend,
                 "xfer_copy_async on a buffer imported by another process vs the exporter's own copy "
                 "(XFER_ALLOC_SHAREABLE)" +
                     origin,
                 size, goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt,
                 [=](BenchEnv &env, BenchRow &row) { measure_import_vs_exporter(env, row, backend, dir, size); }});
}

void add_async(std::vector<TargetSpec> &t, const std::string &backend, const std::vector<std::uint64_t> &sizes,
               std::optional<double> goal_percent, const std::string &origin) {
    for (xfer_direction dir : kDirections)
        for (std::uint64_t size : sizes)
            t.push_back({backend + "-async-" + dir_tag(dir) + "-" + size_tag(size), backend,
                         "host time of the xfer_copy_async call vs the copy's time (returns without waiting)" + origin,
                         size, goal_percent ? std::optional<Goal>(at_most(*goal_percent, "%")) : std::nullopt,
                         [=](BenchEnv &env, BenchRow &row) { measure_async_host_time(env, row, backend, dir, size); }});
}

void add_overhead(std::vector<TargetSpec> &t, const std::string &backend, std::optional<double> goal_us,
                  const std::string &origin) {
    for (xfer_direction dir : kDirections)
        t.push_back({backend + "-overhead-" + dir_tag(dir), backend,
                     "host time of a " + std::to_string(kSmallCopy) +
                         "-byte xfer_memcpy_async (statistics on, as always) minus the raw call's, per call" + origin,
                     kSmallCopy, goal_us ? std::optional<Goal>(at_most(*goal_us, "us")) : std::nullopt,
                     [=](BenchEnv &env, BenchRow &row) { measure_call_overhead(env, row, backend, dir, kSmallCopy); }});
}

// What a copy observer adds to each copy, the same call as the overhead rows.
void add_observer(std::vector<TargetSpec> &t, const std::string &backend, std::optional<double> goal_us,
                  const std::string &origin) {
    for (xfer_direction dir : kDirections)
        t.push_back({backend + "-observer-" + dir_tag(dir), backend,
                     "host time of a " + std::to_string(kSmallCopy) +
                         "-byte xfer_memcpy_async with a no-op copy observer minus without one, per copy" + origin,
                     kSmallCopy, goal_us ? std::optional<Goal>(at_most(*goal_us, "us")) : std::nullopt,
                     [=](BenchEnv &env, BenchRow &row) { measure_observer_cost(env, row, backend, dir, kSmallCopy); }});
}

void add_batches(std::vector<TargetSpec> &t, const std::string &backend, std::size_t count, std::size_t piece,
                 std::optional<double> loop_goal, std::optional<double> coalesced_goal, const std::string &origin) {
    const std::string what = std::to_string(count) + " scattered pieces of " + format_size(piece);
    for (xfer_direction dir : kDirections) {
        t.push_back(
            {backend + "-batch-loop-" + dir_tag(dir), backend,
             "xfer_memcpy_batch_async of " + what + " vs a loop of single raw copies" + origin, count * piece,
             loop_goal ? std::optional<Goal>(at_least(*loop_goal)) : std::nullopt,
             [=](BenchEnv &env, BenchRow &row) { measure_batch(env, row, backend, dir, count, piece, false); }});
        t.push_back({backend + "-batch-coalesced-" + dir_tag(dir), backend,
                     "xfer_memcpy_batch_async of " + what + " vs one raw copy of the same bytes" + origin,
                     count * piece, coalesced_goal ? std::optional<Goal>(at_least(*coalesced_goal)) : std::nullopt,
                     [=](BenchEnv &env, BenchRow &row) { measure_batch(env, row, backend, dir, count, piece, true); }});
    }
}

void add_user_memory(std::vector<TargetSpec> &t, const std::string &backend, std::uint64_t size,
                     std::optional<double> goal, const std::string &origin) {
    t.push_back({backend + "-malloc-h2d-" + size_tag(size), backend,
                 "repeated xfer_memcpy_async from one malloc'd buffer vs a raw copy from the " + backend +
                     " buffer's host view" + origin,
                 size, goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt,
                 [=](BenchEnv &env, BenchRow &row) { measure_user_memory(env, row, backend, size); }});
}

void add_overlap_efficiency(std::vector<TargetSpec> &t, const std::string &backend, std::uint64_t size, int batches,
                            int streams, std::optional<double> goal, const std::string &origin) {
    t.push_back({backend + "-overlap", backend,
                 "overlap workflow (" + format_size(size) + ", " + std::to_string(batches) + " batches, " +
                     std::to_string(streams) + " streams): pipelined time vs its ideal" + origin,
                 size, goal ? std::optional<Goal>(at_least(*goal)) : std::nullopt, [=](BenchEnv &env, BenchRow &row) {
                     measure_overlap_efficiency(env, row, backend, size, batches, streams);
                 }});
}

std::vector<TargetSpec> make_cuda_targets() {
    const RunOptions workflow_defaults; // overlap and batching as `xfer-tool run` runs them
    const std::vector<std::uint64_t> large = {64 * MiB, 256 * MiB, 1 * GiB};
    std::vector<std::uint64_t> sweep;
    for (std::uint64_t size = 4 * KiB; size <= 1 * GiB; size *= 4) sweep.push_back(size);
    std::vector<TargetSpec> t;

    // Ordinary (pageable) memory at pinned speed, never slower than the driver.
    const std::pair<xfer_direction, double> vs_pinned[] = {{XFER_TO_DEVICE, 0.90}, {XFER_TO_HOST, 0.85}};
    for (const auto &[dir, goal] : vs_pinned)
        for (std::uint64_t size : large)
            t.push_back({"pageable-pinned-" + dir_tag(dir) + "-" + size_tag(size), "pageable",
                         "xfer_copy_async on pageable vs on pinned memory", size, at_least(goal),
                         [=](BenchEnv &env, BenchRow &row) {
                             measure_copy_vs_backend(env, row, "pageable", "pinned", dir, size);
                         }});
    add_copy_vs_raw(t, "pageable", sweep, 0.97, "");
    add_async(t, "pageable", large, 5.0, "");
    t.push_back({"pageable-overlap", "pageable",
                 "overlap workflow's speed-up on pageable vs on pinned (" + format_size(workflow_defaults.size) + ", " +
                     std::to_string(workflow_defaults.batches) + " batches, " +
                     std::to_string(workflow_defaults.streams) + " streams)",
                 workflow_defaults.size, at_least(0.90), [=](BenchEnv &env, BenchRow &row) {
                     measure_overlap_vs_backend(env, row, "pageable", "pinned", workflow_defaults.size,
                                                workflow_defaults.batches, workflow_defaults.streams);
                 }});
    add_copy_vs_raw(t, "pinned", {1 * MiB, 64 * MiB, 1 * GiB}, 0.99, "");
    // Real programs copy between other work: within 10% of the back-to-back figure after a gap,
    // idle or spent reading other memory.
    for (const char *backend : {"pageable", "pinned"}) {
        add_idle_gap(t, backend, {64 * MiB, 256 * MiB}, 30, 0.90, "");
        add_host_work_gap(t, backend, {64 * MiB}, 1 * GiB, 0.90, "");
    }
    // User memory however it lives: a one-off copy never below the driver's (and near pinned
    // speed from 256 MiB), a loop's array at pinned speed from its third copy, small pieces as
    // fast as the driver's own copies of them.
    std::vector<std::uint64_t> once;
    for (std::uint64_t size = 4 * KiB; size <= 1 * GiB; size *= 16) once.push_back(size);
    add_user_ways(t, "pageable", "pinned", once, {64 * MiB, 256 * MiB, 1 * GiB}, 4 * KiB, 1024,
                  UserMemoryGoals{0.97, 0.90, 0.95, 0.97}, "");
    // A buffer handed to another process copies as fast there as in the process that made it.
    add_import(t, "pinned", {64 * MiB, 256 * MiB}, 0.97, "");
    add_import(t, "pageable", {256 * MiB}, 0.97, "");
    for (const char *backend : {"pinned", "pageable", "managed", "zerocopy"}) add_overhead(t, backend, 0.1, "");
    // Observing every copy (xfer_set_copy_observer) is cheap enough to leave on.
    for (const char *backend : {"pinned", "pageable", "managed", "zerocopy"}) add_observer(t, backend, 0.3, "");

    // Small copies batched, user memory registered, overlap at the ideal, managed to host.
    for (const char *backend : {"pinned", "pageable"})
        add_batches(t, backend, workflow_defaults.copies, workflow_defaults.copy_size, 10.0, 0.5, "");
    add_user_memory(t, "pinned", 256 * MiB, 0.97, "");
    add_overlap_efficiency(t, "pinned", workflow_defaults.size, workflow_defaults.batches, workflow_defaults.streams,
                           0.95, "");
    t.push_back({"managed-to-host-" + size_tag(256 * MiB), "managed",
                 "xfer_copy_async(XFER_TO_HOST) of a managed buffer vs raw cudaMemPrefetchAsync to the host", 256 * MiB,
                 at_least(1.5),
                 [=](BenchEnv &env, BenchRow &row) { measure_managed_to_host(env, row, "managed", 256 * MiB); }});
    return t;
}

// The smoke set: every kind of measurement once on the host backend, small enough for CI.
std::vector<TargetSpec> make_smoke_targets() {
    const std::string smoke = " (smoke: no target)";
    std::vector<TargetSpec> t;
    add_copy_vs_raw(t, "host", {1 * MiB}, std::nullopt, smoke);
    add_async(t, "host", {1 * MiB}, std::nullopt, smoke);
    add_idle_gap(t, "host", {1 * MiB}, 2, std::nullopt, smoke);
    add_host_work_gap(t, "host", {1 * MiB}, 16 * MiB, std::nullopt, smoke);
    add_user_ways(t, "host", "host", {1 * MiB}, {1 * MiB}, 4 * KiB, 64, UserMemoryGoals{}, smoke);
    add_import(t, "host", {1 * MiB}, std::nullopt, smoke);
    add_overhead(t, "host", std::nullopt, smoke);
    add_observer(t, "host", std::nullopt, smoke);
    add_batches(t, "host", 256, 4 * KiB, std::nullopt, std::nullopt, smoke);
    add_user_memory(t, "host", 1 * MiB, std::nullopt, smoke);
    add_overlap_efficiency(t, "host", 1 * MiB, 4, 2, std::nullopt, smoke);
    return t;
}

} // namespace

const std::vector<TargetSpec> &cuda_targets() {
    static const std::vector<TargetSpec> t = make_cuda_targets();
    return t;
}

const std::vector<TargetSpec> &smoke_targets() {
    static const std::vector<TargetSpec> t = make_smoke_targets();
    return t;
}

namespace {

std::string backends_with_targets() {
    std::vector<std::string> names;
    for (const auto *table : {&cuda_targets(), &smoke_targets()})
        for (const TargetSpec &t : *table)
            if (std::find(names.begin(), names.end(), t.backend) == names.end()) names.push_back(t.backend);
    std::string text;
    for (const std::string &n : names) text += (text.empty() ? "" : ", ") + n;
    return text;
}

} // namespace

std::vector<const TargetSpec *> select_targets(const std::vector<std::string> &backends,
                                               const std::vector<std::string> &patterns, bool gpu) {
    std::vector<const TargetSpec *> pool;
    auto add_table = [&](const std::vector<TargetSpec> &table) {
        for (const TargetSpec &t : table) pool.push_back(&t);
    };
    if (!backends.empty() || !patterns.empty()) {
        add_table(cuda_targets());
        add_table(smoke_targets());
    } else {
        add_table(gpu ? cuda_targets() : smoke_targets());
    }
    if (!backends.empty()) {
        std::vector<const TargetSpec *> kept;
        for (const std::string &b : backends) {
            const auto before = kept.size();
            for (const TargetSpec *t : pool)
                if (t->backend == b) kept.push_back(t);
            if (kept.size() == before)
                throw std::invalid_argument("no bench target is about backend '" + b +
                                            "' (backends with targets: " + backends_with_targets() + ")");
        }
        pool = kept;
    }
    if (patterns.empty()) return pool;
    std::vector<const TargetSpec *> out;
    for (const std::string &p : patterns) {
        bool any = false;
        for (const TargetSpec *t : pool) {
            if (fnmatch(p.c_str(), t->name.c_str(), 0) != 0) continue;
            any = true;
            if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
        }
        if (!any)
            throw std::invalid_argument("no bench target matches '" + p + "'" +
                                        (backends.empty() ? "" : " among the chosen backends") +
                                        " (xfer-tool bench --list names them)");
    }
    // Table order, whatever the order of the patterns.
    std::vector<const TargetSpec *> ordered;
    for (const TargetSpec *t : pool)
        if (std::find(out.begin(), out.end(), t) != out.end()) ordered.push_back(t);
    return ordered;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// bandwidth: H2D, D2H and bidirectional (both directions at once on two streams) over a size
// sweep; warm-up, then min / median / max over the repeats, timed with events.
//
// Side by side (DESIGN.md, "Measuring"): every H2D and D2H repeat also times the raw call a
// user would write without xfer on the same memory (raw_copy.hpp), interleaved in the same
// loop, and the report gives its GB/s and the per-repeat ratio "xfer / raw" (> 1: xfer faster).
//
// Decisions: zero-copy moves nothing, so its GB/s rows are reported as "no copy (mapped)"
// without a number rather than a fake rate (the time of the ordering-only call is still
// shown), and it has no raw equivalent (n/a); on managed memory each timed prefetch, xfer's
// and the raw one, starts with the pages on the other side.
#include <algorithm>
#include <cstring>
#include <optional>

#include "random_data.hpp"
#include "side_by_side.hpp"
#include "units.hpp"
#include "workflows/raw_copy.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

// GB/s and time of one direction at one size; `moved` counts both directions when bidirectional.
void add_rows(std::vector<Figure> &rows, const Testbed &s, const std::string &name, std::uint64_t moved,
              std::uint64_t size, const std::vector<double> &ms) {
    std::string note = copy_note(s);
    if (moved != size) note = "counts the bytes of both directions" + (note.empty() ? "" : "; " + note);
    if (s.no_copy())
        rows.push_back(absent_figure(name, "GB/s", size, "no copy (mapped)"));
    else
        rows.push_back(rate_figure(name, moved, ms, note));
    rows.back().bytes = size;
    rows.push_back(time_figure(name, ms, size, note));
}

struct SideBySide {
    std::vector<double> xfer_ms, raw_ms; // raw_ms[i] was measured next to xfer_ms[i]
};

// One direction at one size: per repeat, the xfer copy on s1 and the raw call on its own
// stream, each starting from the same page placement. Which goes first alternates, so neither
// always inherits the other's cache and TLB state.
SideBySide time_side_by_side(Testbed &s, const RunOptions &o, const Buffer &buf, xfer_direction dir, RawCall raw,
                             const Stream &s1, const Stream &raw_stream, const std::string &label) {
    SideBySide out;
    int turn = 0;
    run_repeats(o, [&](bool warmup) {
        auto xfer_once = [&] {
            place_for(s, buf, dir, s1);
            Span span = queue_copy(s, buf, dir, s1, label);
            s1.synchronize();
            return s.timeline().finish(span).duration_ms;
        };
        auto raw_once = [&] {
            place_for(s, buf, dir, s1);
            return timed_raw_copy(s, raw, buf, dir, raw_stream, "raw " + label);
        };
        const bool with_raw = raw != RawCall::none;
        const bool raw_first = with_raw && turn++ % 2 == 1;
        double raw_ms = raw_first ? raw_once() : 0.0;
        const double xfer_ms = xfer_once();
        if (with_raw && !raw_first) raw_ms = raw_once();
        if (warmup) return;
        out.xfer_ms.push_back(xfer_ms);
        if (with_raw) out.raw_ms.push_back(raw_ms);
    });
    return out;
}

// Rows of one direction, grouped so each reads as a curve over the sizes.
struct DirectionRows {
    std::vector<Figure> xfer, raw, ratio;
    void add_side_by_side(const std::string &direction, std::uint64_t size, const SideBySide &t, RawCall raw_call) {
        std::optional<std::vector<double>> raw_ms;
        if (raw_call != RawCall::none) raw_ms = t.raw_ms;
        std::vector<Figure> f = side_by_side_figures(direction, size, t.xfer_ms, raw_ms, raw_call_text(raw_call));
        raw.push_back(f.at(0));
        ratio.push_back(f.at(1));
    }
    void append_to(std::vector<Figure> &figures) const {
        for (const auto *rows : {&xfer, &raw, &ratio}) figures.insert(figures.end(), rows->begin(), rows->end());
    }
};

} // namespace

void run_bandwidth(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::vector<std::uint64_t> sizes = o.sizes.empty() ? default_sweep_sizes() : o.sizes;
    std::string list;
    for (std::uint64_t size : sizes) list += (list.empty() ? "" : ",") + format_size(size);
    add_text_param(r, "sizes", list);
    add_common_params(r, o);

    const RawCall raw = raw_call_for(s);
    add_text_param(r, "raw call", raw_call_text(raw));

    // The raw calls get a stream of their own, as a user's code would have; it is an xfer
    // stream only so that its native handle and the same events serve timing and the trace.
    Stream s1(s.context()), s2(s.context()), raw_stream(s.context());
    s.timeline().name_stream(s1, "stream 1");
    s.timeline().name_stream(s2, "stream 2");
    s.timeline().name_stream(raw_stream, "raw calls");
    Verifier verifier;
    DirectionRows h2d_rows, d2h_rows;
    std::vector<Figure> bidir_rows;

    const bool do_h2d = o.has_direction("h2d"), do_d2h = o.has_direction("d2h"), do_bidir = o.has_direction("bidir");
    add_text_param(r, "directions", [&] {
        std::string text;
        for (const std::string &d : o.directions) text += (text.empty() ? "" : ",") + d;
        return text;
    }());
    for (std::uint64_t size64 : sizes) {
        const std::size_t size = static_cast<std::size_t>(size64);
        const std::string sz = format_size(size);
        s.timeline().reanchor(s.anchor_stream());
        // Buffer b only for the bidirectional test (data flowing both ways); freed per size, so
        // the peak is what the largest size needs: one or two buffers of it, both views.
        Buffer a(s.context(), size);
        std::optional<Buffer> b;
        if (do_bidir) b.emplace(s.context(), size);
        const std::uint64_t seed_a = derive_seed(o.seed, 100 + size64), seed_b = derive_seed(o.seed, 200 + size64);
        RandomData(seed_a).fill_bytes(a.host(), size);
        if (b) {
            RandomData(seed_b).fill_bytes(b->host(), size);
            check(xfer_copy(b->get(), XFER_TO_DEVICE, 0, size), "xfer_copy"); // b's device view starts with b's data
        }
        // A raw call that moved bytes the wrong way would still time plausibly: prove it first.
        verify_raw_copies(s, raw, a, raw_stream, seed_a, verifier, "raw h2d + d2h of buffer a (" + sz + ")");

        if (do_h2d) {
            run.progress.detail(sz + " h2d");
            const SideBySide h2d = time_side_by_side(s, o, a, XFER_TO_DEVICE, raw, s1, raw_stream, "h2d " + sz);
            add_rows(h2d_rows.xfer, s, "h2d", size, size, h2d.xfer_ms);
            h2d_rows.add_side_by_side("h2d", size, h2d, raw);
        }
        if (do_d2h) {
            run.progress.detail(sz + " d2h");
            const SideBySide d2h = time_side_by_side(s, o, a, XFER_TO_HOST, raw, s1, raw_stream, "d2h " + sz);
            add_rows(d2h_rows.xfer, s, "d2h", size, size, d2h.xfer_ms);
            d2h_rows.add_side_by_side("d2h", size, d2h, raw);
        }
        if (b) {
            run.progress.detail(sz + " bidirectional");
            std::vector<double> bidir = repeat(o, [&](bool) {
                place_for(s, a, XFER_TO_DEVICE, s1);
                place_for(s, *b, XFER_TO_HOST, s2);
                Span up = queue_copy(s, a, XFER_TO_DEVICE, s1, "bidir h2d " + sz);
                Span down = queue_copy(s, *b, XFER_TO_HOST, s2, "bidir d2h " + sz);
                s1.synchronize();
                s2.synchronize();
                SpanTime tu = s.timeline().finish(up), td = s.timeline().finish(down);
                return std::max(tu.end_ms, td.end_ms) - std::min(tu.start_ms, td.start_ms);
            });
            add_rows(bidir_rows, s, "bidirectional", 2 * size64, size, bidir);
        }

        // The device views must hold their inputs: clear the host views and fetch them.
        if (!s.shared_view()) {
            std::memset(a.host(), 0, size);
            if (b) std::memset(b->host(), 0, size);
        }
        fetch_to_host(s, a, s1);
        verifier.bytes_from_seed("buffer a (" + sz + ")", a.host(), size, seed_a);
        if (b) {
            fetch_to_host(s, *b, s2);
            verifier.bytes_from_seed("buffer b (" + sz + ")", b->host(), size, seed_b);
        }
    }
    // Grouped by direction, sizes ascending: reads as curves (xfer, raw, ratio per direction).
    h2d_rows.append_to(r.figures);
    d2h_rows.append_to(r.figures);
    r.figures.insert(r.figures.end(), bidir_rows.begin(), bidir_rows.end());
    r.verification = verifier.result();
}

} // namespace xfer::tool

// bandwidth: H2D, D2H and bidirectional (both directions at once on two streams) over a size
// sweep; warm-up, then min / median / max over the repeats, timed with events.
//
// Decisions: zero-copy moves nothing, so its GB/s rows are reported as "no copy (mapped)"
// without a number rather than a fake rate (the time of the ordering-only call is still
// shown); on managed memory each timed prefetch starts with the pages on the other side.
#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

#include <algorithm>
#include <cstring>

namespace xfer_tool {
namespace {

// GB/s and time of one direction at one size; `moved` counts both directions when bidirectional.
void add_rows(std::vector<Figure> &rows, const Session &s, const std::string &name, std::uint64_t moved,
              std::uint64_t size, const std::vector<double> &ms)
{
    std::string note = copy_note(s);
    if (moved != size)
        note = "counts the bytes of both directions" + (note.empty() ? "" : "; " + note);
    if (s.no_copy())
        rows.push_back(absent_figure(name, "GB/s", size, "no copy (mapped)"));
    else
        rows.push_back(rate_figure(name, moved, ms, note));
    rows.back().bytes = size;
    rows.push_back(time_figure(name, ms, size, note));
}

} // namespace

void run_bandwidth(WorkflowRun &run)
{
    Session &s = run.session;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::vector<std::uint64_t> sizes = o.sizes.empty() ? default_sweep_sizes() : o.sizes;
    std::string list;
    for (std::uint64_t size : sizes)
        list += (list.empty() ? "" : ",") + format_size(size);
    add_text_param(r, "sizes", list);
    add_common_params(r, o);

    Stream s1(s.context()), s2(s.context());
    s.timeline().name_stream(s1, "stream 1");
    s.timeline().name_stream(s2, "stream 2");
    Verifier verifier;
    std::vector<Figure> h2d_rows, d2h_rows, bidir_rows;

    for (std::uint64_t size64 : sizes) {
        const std::size_t size = static_cast<std::size_t>(size64);
        const std::string sz = format_size(size);
        s.timeline().reanchor(s.anchor_stream());
        // Two buffers so the bidirectional test has data flowing both ways; freed per size.
        Buffer a(s.context(), size), b(s.context(), size);
        const std::uint64_t seed_a = derive_seed(o.seed, 100 + size64), seed_b = derive_seed(o.seed, 200 + size64);
        RandomData(seed_a).fill_bytes(a.host(), size);
        RandomData(seed_b).fill_bytes(b.host(), size);
        check(xfer_copy(b.get(), XFER_TO_DEVICE, 0, size), "xfer_copy"); // b's device view starts with b's data

        run.progress.detail(sz + " h2d");
        std::vector<double> h2d = repeat(o, [&](bool) {
            place_for(s, a, XFER_TO_DEVICE, s1);
            Span span = queue_copy(s, a, XFER_TO_DEVICE, s1, "h2d " + sz);
            s1.synchronize();
            return s.timeline().finish(span).duration_ms;
        });

        run.progress.detail(sz + " d2h");
        std::vector<double> d2h = repeat(o, [&](bool) {
            place_for(s, a, XFER_TO_HOST, s1);
            Span span = queue_copy(s, a, XFER_TO_HOST, s1, "d2h " + sz);
            s1.synchronize();
            return s.timeline().finish(span).duration_ms;
        });

        run.progress.detail(sz + " bidirectional");
        std::vector<double> bidir = repeat(o, [&](bool) {
            place_for(s, a, XFER_TO_DEVICE, s1);
            place_for(s, b, XFER_TO_HOST, s2);
            Span up = queue_copy(s, a, XFER_TO_DEVICE, s1, "bidir h2d " + sz);
            Span down = queue_copy(s, b, XFER_TO_HOST, s2, "bidir d2h " + sz);
            s1.synchronize();
            s2.synchronize();
            SpanTime tu = s.timeline().finish(up), td = s.timeline().finish(down);
            return std::max(tu.end_ms, td.end_ms) - std::min(tu.start_ms, td.start_ms);
        });

        add_rows(h2d_rows, s, "h2d", size, size, h2d);
        add_rows(d2h_rows, s, "d2h", size, size, d2h);
        add_rows(bidir_rows, s, "bidirectional", 2 * size64, size, bidir);

        // Both device views must hold their inputs: clear the host views and fetch them.
        if (!s.shared_view()) {
            std::memset(a.host(), 0, size);
            std::memset(b.host(), 0, size);
        }
        fetch_to_host(s, a, s1);
        fetch_to_host(s, b, s2);
        verifier.bytes_from_seed("buffer a (" + sz + ")", a.host(), size, seed_a);
        verifier.bytes_from_seed("buffer b (" + sz + ")", b.host(), size, seed_b);
    }
    // Grouped by direction, sizes ascending: reads as three curves.
    for (auto *rows : {&h2d_rows, &d2h_rows, &bidir_rows})
        r.figures.insert(r.figures.end(), rows->begin(), rows->end());
    r.verification = verifier.result();
}

} // namespace xfer_tool

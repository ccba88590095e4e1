// SPDX-License-Identifier: Apache-2.0
// sync-async: the same transfer issued blocking (xfer_copy) and on a stream (xfer_copy_async):
// how long each call blocks the host, and the total when the host does a fixed amount of its
// own work between enqueueing and synchronising. Shows what asynchronous copies buy, and that
// "async" copies from pageable memory block anyway.
#include <cstring>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/host_work.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

struct DirectionFigures {
    std::vector<double> blocking, async_call, async_total, work, blocking_work, async_work, gain;
};

DirectionFigures measure(WorkflowRun &run, const Buffer &buf, const Stream &stream, xfer_direction dir,
                         const std::string &label) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    const std::size_t bytes = buf.bytes();
    DirectionFigures f;

    auto blocking_copy = [&](const std::string &name) {
        auto t0 = Clock::now();
        check(xfer_copy(buf.get(), dir, 0, bytes), "xfer_copy");
        auto t1 = Clock::now();
        s.timeline().host_span(name, copy_category(s), t0, t1, bytes);
        return ms_between(t0, t1);
    };

    run.progress.detail(label + " blocking");
    f.blocking = repeat(o, [&](bool) {
        place_for(s, buf, dir, stream);
        return blocking_copy(label + " xfer_copy (blocking)");
    });

    run.progress.detail(label + " async");
    run_repeats(o, [&](bool warmup) {
        place_for(s, buf, dir, stream);
        auto t0 = Clock::now();
        Span span = queue_copy(s, buf, dir, stream, label + " xfer_copy_async");
        auto t1 = Clock::now();
        stream.synchronize();
        auto t2 = Clock::now();
        s.timeline().finish(span);
        s.timeline().host_span(label + " enqueue (host blocked)", "host", t0, t1);
        if (!warmup) {
            f.async_call.push_back(ms_between(t0, t1));
            f.async_total.push_back(ms_between(t0, t2));
        }
    });

    // The host's own work takes about as long as the blocking copy: the best case for overlap.
    HostWork work;
    work.calibrate(median_of(f.blocking));

    run.progress.detail(label + " with host work");
    run_repeats(o, [&](bool warmup) {
        auto w0 = Clock::now();
        work.run();
        auto w1 = Clock::now();
        s.timeline().host_span("host work (alone)", "host", w0, w1);

        place_for(s, buf, dir, stream);
        auto b0 = Clock::now();
        check(xfer_copy(buf.get(), dir, 0, bytes), "xfer_copy");
        auto b1 = Clock::now();
        work.run();
        auto b2 = Clock::now();
        s.timeline().host_span(label + " xfer_copy (blocking)", copy_category(s), b0, b1, bytes);
        s.timeline().host_span("host work", "host", b1, b2);

        place_for(s, buf, dir, stream);
        auto a0 = Clock::now();
        Span span = queue_copy(s, buf, dir, stream, label + " xfer_copy_async");
        auto a1 = Clock::now();
        work.run();
        auto a2 = Clock::now();
        stream.synchronize();
        auto a3 = Clock::now();
        s.timeline().finish(span);
        s.timeline().host_span(label + " enqueue (host blocked)", "host", a0, a1);
        s.timeline().host_span("host work", "host", a1, a2);
        if (!warmup) {
            f.work.push_back(ms_between(w0, w1));
            f.blocking_work.push_back(ms_between(b0, b2));
            f.async_work.push_back(ms_between(a0, a3));
            f.gain.push_back(ms_between(b0, b2) / ms_between(a0, a3));
        }
    });
    return f;
}

void add_figures(WorkflowResult &r, const Testbed &s, const DirectionFigures &f, const std::string &label,
                 std::uint64_t bytes) {
    const double blocked = median_of(f.async_call) / median_of(f.async_total) * 100.0;
    const std::string blocked_note = "host blocked for " + format_value(blocked) + "% of the async copy's time" +
                                     (blocked > 50.0 ? " (the call did the copy itself)" : "");
    r.figures.push_back(time_figure(label + " blocking call", f.blocking, bytes, "host blocked for the whole copy"));
    r.figures.push_back(time_figure(label + " async call", f.async_call, bytes, blocked_note));
    r.figures.push_back(time_figure(label + " async call + sync", f.async_total, bytes, copy_note(s)));
    r.figures.push_back(time_figure(label + " host work", f.work, 0, "fixed work, calibrated to the blocking copy"));
    r.figures.push_back(time_figure(label + " blocking + work", f.blocking_work, bytes, "copy, then the work"));
    r.figures.push_back(time_figure(label + " async + work", f.async_work, bytes, "enqueue, work, synchronize"));
    r.figures.push_back(value_figure(label + " async speed-up", "x", f.gain, "(blocking + work) / (async + work)"));
}

} // namespace

void run_sync_async(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t bytes = static_cast<std::size_t>(o.size);
    add_size_param(r, "size", bytes);
    add_common_params(r, o);

    Buffer buf(s.context(), bytes);
    Stream stream(s.context());
    s.timeline().name_stream(stream, "stream 0");
    const std::uint64_t seed = derive_seed(o.seed, 2);
    RandomData(seed).fill_bytes(buf.host(), bytes);

    DirectionFigures h2d = measure(run, buf, stream, XFER_TO_DEVICE, "h2d");
    // The device view now holds the data; the D2H runs bring it back unchanged.
    DirectionFigures d2h = measure(run, buf, stream, XFER_TO_HOST, "d2h");
    add_figures(r, s, h2d, "h2d", bytes);
    add_figures(r, s, d2h, "d2h", bytes);

    // What the device view holds must be the input: clear the host view and fetch it back.
    if (!s.shared_view()) std::memset(buf.host(), 0, bytes);
    fetch_to_host(s, buf, stream);
    Verifier verifier;
    verifier.bytes_from_seed("data after h2d and d2h", buf.host(), bytes, seed);
    r.verification = verifier.result();
}

} // namespace xfer::tool

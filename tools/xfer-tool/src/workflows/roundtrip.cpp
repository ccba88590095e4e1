// SPDX-License-Identifier: Apache-2.0
// roundtrip: the host prepares random data, copies it to the device, the device computes an
// element-wise square root, the result comes back and the host verifies it against its own.
#include <cmath>
#include <cstring>
#include <vector>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {

void run_roundtrip(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t n = float_count(o.size, "--size");
    const std::size_t bytes = n * sizeof(float);
    add_size_param(r, "size", bytes);
    add_count_param(r, "elements", n);
    add_common_params(r, o);

    Buffer in(s.context(), bytes);
    Buffer out(s.context(), bytes);
    Stream stream(s.context());
    s.timeline().name_stream(stream, "stream 0");

    // Host preparation: random input straight into the host view, and the host's own result.
    auto t0 = Clock::now();
    RandomData(derive_seed(o.seed, 1)).fill_floats(in.host<float>(), n);
    auto t1 = Clock::now();
    std::vector<float> reference(n);
    for (std::size_t i = 0; i < n; ++i) reference[i] = std::sqrt(in.host<float>()[i]);
    auto t2 = Clock::now();
    s.timeline().host_span("prepare input", "host", t0, t1);
    s.timeline().host_span("host reference", "host", t1, t2);
    // Zeroing touches every page before timing and makes an unwritten result fail.
    clear_buffer(s, out, stream);

    std::vector<double> h2d, kernel, d2h, total;
    int iteration = 0;
    run_repeats(o, [&](bool warmup) {
        run.progress.detail(warmup ? "warm-up" : "repeat " + std::to_string(++iteration));
        // Managed: start as after host preparation (input on the host, output on the device).
        place_for(s, in, XFER_TO_DEVICE, stream);
        place_for(s, out, XFER_TO_HOST, stream);
        Span a = queue_copy(s, in, XFER_TO_DEVICE, stream, "h2d input");
        Span k = s.timeline().begin(stream, "sqrt kernel", "kernel", bytes);
        s.kernels().sqrt(in.device<float>(), out.device<float>(), n, stream);
        s.timeline().end(k);
        Span b = queue_copy(s, out, XFER_TO_HOST, stream, "d2h result");
        stream.synchronize();
        SpanTime ta = s.timeline().finish(a), tk = s.timeline().finish(k), tb = s.timeline().finish(b);
        if (!warmup) {
            h2d.push_back(ta.duration_ms);
            kernel.push_back(tk.duration_ms);
            d2h.push_back(tb.duration_ms);
            total.push_back(tb.end_ms - ta.start_ms);
        }
    });

    auto v0 = Clock::now();
    Verifier verifier;
    verifier.floats("sqrt result", out.host<float>(), reference.data(), n);
    auto v1 = Clock::now();
    s.timeline().host_span("verify", "host", v0, v1);

    const std::string note = copy_note(s);
    r.figures.push_back(Figure{"host prepare", "ms", bytes, single(ms_between(t0, t1)), "random input, on the host"});
    r.figures.push_back(time_figure("h2d", h2d, bytes, note));
    if (s.no_copy())
        r.figures.push_back(absent_figure("h2d", "GB/s", bytes, "no copy (mapped)"));
    else
        r.figures.push_back(rate_figure("h2d", bytes, h2d, note));
    r.figures.push_back(
        time_figure("kernel", kernel, bytes, s.no_copy() ? "sqrt reads and writes host memory over the bus" : "sqrt"));
    r.figures.push_back(time_figure("d2h", d2h, bytes, note));
    if (s.no_copy())
        r.figures.push_back(absent_figure("d2h", "GB/s", bytes, "no copy (mapped)"));
    else
        r.figures.push_back(rate_figure("d2h", bytes, d2h, note));
    r.figures.push_back(time_figure("device total", total, bytes, "start of h2d to end of d2h"));
    r.figures.push_back(Figure{"host verify", "ms", bytes, single(ms_between(v0, v1)), ""});
    r.verification = verifier.result();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// vector-add: c = a + b on the device, the unified-memory example of the tutorial this project
// grew from. On backends whose host and device views are one memory (managed, zerocopy) the
// kernel works on it directly, with no copies; elsewhere a and b go in and c comes back
// explicitly. Each managed repeat starts with a, b and c on the host, as after host
// initialisation, so the kernel time includes on-demand page migration.
#include <vector>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {

void run_vector_add(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t n = float_count(o.size, "--size");
    const std::size_t bytes = n * sizeof(float);
    const bool direct = s.shared_view();
    add_size_param(r, "size", bytes);
    add_count_param(r, "elements", n);
    add_text_param(r, "mode", direct ? "kernel on shared memory (no explicit copies)" : "explicit copies");
    add_common_params(r, o);

    Buffer a(s.context(), bytes), b(s.context(), bytes), c(s.context(), bytes);
    Stream stream(s.context());
    s.timeline().name_stream(stream, "stream 0");
    RandomData(derive_seed(o.seed, 3)).fill_floats(a.host<float>(), n);
    RandomData(derive_seed(o.seed, 4)).fill_floats(b.host<float>(), n);
    clear_buffer(s, c, stream);

    std::vector<double> h2d, kernel, d2h, total;
    run_repeats(o, [&](bool warmup) {
        if (direct) {
            for (const Buffer *buf : {&a, &b, &c}) place_for(s, *buf, XFER_TO_DEVICE, stream);
            Span k = s.timeline().begin(stream, "vector_add kernel", "kernel", 3 * bytes);
            s.kernels().vector_add(a.device<float>(), b.device<float>(), c.device<float>(), n, stream);
            s.timeline().end(k);
            stream.synchronize();
            SpanTime tk = s.timeline().finish(k);
            if (!warmup) {
                kernel.push_back(tk.duration_ms);
                total.push_back(tk.duration_ms);
            }
            return;
        }
        Span ia = queue_copy(s, a, XFER_TO_DEVICE, stream, "h2d a");
        Span ib = queue_copy(s, b, XFER_TO_DEVICE, stream, "h2d b");
        Span k = s.timeline().begin(stream, "vector_add kernel", "kernel", 3 * bytes);
        s.kernels().vector_add(a.device<float>(), b.device<float>(), c.device<float>(), n, stream);
        s.timeline().end(k);
        Span oc = queue_copy(s, c, XFER_TO_HOST, stream, "d2h c");
        stream.synchronize();
        SpanTime ta = s.timeline().finish(ia), tb = s.timeline().finish(ib);
        SpanTime tk = s.timeline().finish(k), tc = s.timeline().finish(oc);
        if (!warmup) {
            h2d.push_back(ta.duration_ms + tb.duration_ms);
            kernel.push_back(tk.duration_ms);
            d2h.push_back(tc.duration_ms);
            total.push_back(tc.end_ms - ta.start_ms);
        }
    });

    Verifier verifier;
    const float *pa = a.host<float>(), *pb = b.host<float>();
    verifier.floats_generated("c = a + b", c.host<float>(), n, [pa, pb](std::size_t i) { return pa[i] + pb[i]; });
    r.verification = verifier.result();

    if (!direct) r.figures.push_back(time_figure("h2d a and b", h2d, 2 * bytes, copy_note(s)));
    r.figures.push_back(time_figure("kernel", kernel, 3 * bytes,
                                    !direct        ? "on device memory"
                                    : s.migrates() ? "on managed memory: includes on-demand page migration"
                                                   : "on mapped host memory, over the bus"));
    if (!direct) r.figures.push_back(time_figure("d2h c", d2h, bytes, copy_note(s)));
    r.figures.push_back(
        time_figure("total", total, 3 * bytes, direct ? "the kernel alone" : "start of h2d to end of d2h"));
    r.figures.push_back(rate_figure("effective", 3 * bytes, total, "bytes of a, b and c over the total time"));
}

} // namespace xfer::tool

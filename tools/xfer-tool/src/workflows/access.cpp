// SPDX-License-Identifier: Apache-2.0
// access: a kernel reading device-visible memory coalesced (neighbouring threads read
// neighbouring elements) and with a stride of --stride elements, and what reading data once
// costs from where it starts.
//
// Where the input is: pageable / pinned / host: in device memory (copied in before the
// kernel; the copy is timed separately and counted in "read once"); managed: on the host at
// the start of every repeat, so the kernel pays on-demand page migration; zero-copy: in host
// memory, read over the bus by every access.
#include <vector>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"
#include "xfer_tool_kernels.h"

namespace xfer::tool {
namespace {

struct PatternFigures {
    std::vector<double> kernel_ms, read_once_ms;
};

PatternFigures measure(WorkflowRun &run, const Buffer &in, const Buffer &out, const Stream &stream, std::size_t n,
                       std::size_t stride, const std::string &label, Verifier &verifier) {
    Testbed &s = run.testbed;
    PatternFigures f;
    clear_buffer(s, out, stream);
    run.progress.detail(label);
    run_repeats(run.options, [&](bool warmup) {
        if (s.shared_view()) {
            place_for(s, in, XFER_TO_DEVICE, stream);
            Span k = s.timeline().begin(stream, label + " read", "kernel", in.bytes());
            s.kernels().gather(in.device<float>(), out.device<float>(), n, stride, stream);
            s.timeline().end(k);
            stream.synchronize();
            SpanTime tk = s.timeline().finish(k);
            if (!warmup) {
                f.kernel_ms.push_back(tk.duration_ms);
                f.read_once_ms.push_back(tk.duration_ms);
            }
            return;
        }
        Span c = queue_copy(s, in, XFER_TO_DEVICE, stream, "h2d input");
        Span k = s.timeline().begin(stream, label + " read", "kernel", in.bytes());
        s.kernels().gather(in.device<float>(), out.device<float>(), n, stride, stream);
        s.timeline().end(k);
        stream.synchronize();
        SpanTime tc = s.timeline().finish(c), tk = s.timeline().finish(k);
        if (!warmup) {
            f.kernel_ms.push_back(tk.duration_ms);
            f.read_once_ms.push_back(tk.end_ms - tc.start_ms);
        }
    });
    fetch_to_host(s, out, stream);
    const float *src = in.host<float>();
    verifier.floats_generated(label + " read result", out.host<float>(), n,
                              [=](std::size_t i) { return src[xfer_tool_gather_index(i, n, stride)] + 1.0f; });
    return f;
}

} // namespace

void run_access(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t n = float_count(o.size, "--size");
    const std::size_t bytes = n * sizeof(float);
    const std::size_t stride = static_cast<std::size_t>(o.stride);
    add_size_param(r, "size", bytes);
    add_count_param(r, "elements", n);
    add_count_param(r, "stride", stride);
    add_text_param(r, "input starts",
                   s.no_copy()    ? "in host memory (mapped)"
                   : s.migrates() ? "on the host (managed pages migrate on access)"
                                  : "on the host, copied to device memory");
    add_common_params(r, o);

    Buffer in(s.context(), bytes), out(s.context(), bytes);
    Stream stream(s.context());
    s.timeline().name_stream(stream, "stream 0");
    RandomData(derive_seed(o.seed, 7)).fill_floats(in.host<float>(), n);

    Verifier verifier;
    PatternFigures coalesced = measure(run, in, out, stream, n, 1, "coalesced", verifier);
    PatternFigures strided = measure(run, in, out, stream, n, stride, "stride " + std::to_string(stride), verifier);
    r.verification = verifier.result();

    std::vector<double> slowdown;
    for (std::size_t i = 0; i < coalesced.kernel_ms.size(); ++i)
        slowdown.push_back(strided.kernel_ms[i] / coalesced.kernel_ms[i]);
    const std::string where = s.no_copy()    ? "reads mapped host memory over the bus"
                              : s.migrates() ? "input starts on the host: includes on-demand page migration"
                                             : "input in device memory";
    // Effective rate counts each element read once and written once.
    r.figures.push_back(time_figure("coalesced kernel", coalesced.kernel_ms, bytes, where));
    r.figures.push_back(rate_figure("coalesced kernel", 2 * bytes, coalesced.kernel_ms, "bytes read + written"));
    r.figures.back().bytes = bytes;
    r.figures.push_back(time_figure("strided kernel", strided.kernel_ms, bytes, where));
    r.figures.push_back(rate_figure("strided kernel", 2 * bytes, strided.kernel_ms, "bytes read + written"));
    r.figures.back().bytes = bytes;
    r.figures.push_back(value_figure("strided slowdown", "x", slowdown, "strided / coalesced kernel time"));
    r.figures.push_back(
        time_figure("read once", coalesced.read_once_ms, bytes,
                    s.shared_view() ? "the coalesced kernel on data where it starts" : "h2d copy + coalesced kernel"));
}

} // namespace xfer::tool

// overlap: --batches batches of copy in -> scale kernel -> copy out, first serially on one
// stream, then pipelined over --streams streams so copies in both directions and compute can
// run at once. Reports both times, the speed-up and the overlap efficiency: the ideal pipelined
// time (one batch's three stages, then one slowest stage per further batch, from the serial
// run's per-stage medians) divided by the measured pipelined time.
#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace xfer_tool {
namespace {

constexpr float kFactor = 1.5f;

struct BatchSpans {
    Span in, kernel, out;
};

struct PassTimes {
    double total_ms = 0;
    double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0; // per batch, mean over the batches
};

// Queues every batch (batch i on streams[i % streams.size()]), waits, and times the pass.
PassTimes run_pass(Session &s, const Buffer &buf, const std::vector<std::unique_ptr<Stream>> &streams,
                   std::size_t batches, std::size_t batch_elems, const std::string &tag)
{
    const std::size_t batch_bytes = batch_elems * sizeof(float);
    std::vector<BatchSpans> spans(batches);
    for (std::size_t i = 0; i < batches; ++i) {
        const Stream &st = *streams[i % streams.size()];
        const std::size_t off = i * batch_bytes;
        const std::string id = tag + " batch " + std::to_string(i);
        spans[i].in = queue_copy(s, buf, XFER_TO_DEVICE, off, batch_bytes, st, id + " in");
        spans[i].kernel = s.timeline().begin(st, id + " scale", "kernel", batch_bytes);
        s.kernels().scale(buf.device<float>() + i * batch_elems, batch_elems, kFactor, st);
        s.timeline().end(spans[i].kernel);
        spans[i].out = queue_copy(s, buf, XFER_TO_HOST, off, batch_bytes, st, id + " out");
    }
    for (const auto &st : streams)
        st->synchronize();
    PassTimes t;
    double first = 0, last = 0;
    for (std::size_t i = 0; i < batches; ++i) {
        SpanTime a = s.timeline().finish(spans[i].in);
        SpanTime k = s.timeline().finish(spans[i].kernel);
        SpanTime b = s.timeline().finish(spans[i].out);
        first = i == 0 ? a.start_ms : std::min(first, a.start_ms);
        last = i == 0 ? b.end_ms : std::max(last, b.end_ms);
        t.h2d_ms += a.duration_ms / batches;
        t.kernel_ms += k.duration_ms / batches;
        t.d2h_ms += b.duration_ms / batches;
    }
    t.total_ms = last - first;
    return t;
}

} // namespace

void run_overlap(WorkflowRun &run)
{
    Session &s = run.session;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t batches = static_cast<std::size_t>(o.batches);
    const std::size_t batch_elems = float_count(o.size / batches, "--size / --batches");
    const std::size_t n = batch_elems * batches;
    const std::size_t bytes = n * sizeof(float);
    add_size_param(r, "size", bytes);
    add_size_param(r, "batch size", batch_elems * sizeof(float));
    add_count_param(r, "batches", batches);
    add_count_param(r, "streams", static_cast<std::uint64_t>(o.streams));
    add_common_params(r, o);

    Buffer buf(s.context(), bytes);
    std::vector<std::unique_ptr<Stream>> serial, pipelined;
    serial.push_back(std::make_unique<Stream>(s.context()));
    s.timeline().name_stream(*serial[0], "serial stream");
    for (int i = 0; i < o.streams; ++i) {
        pipelined.push_back(std::make_unique<Stream>(s.context()));
        s.timeline().name_stream(*pipelined.back(), "stream " + std::to_string(i + 1));
    }

    std::vector<float> input(n), expected(n);
    RandomData(derive_seed(o.seed, 5)).fill_floats(input.data(), n);
    for (std::size_t i = 0; i < n; ++i)
        expected[i] = input[i] * kFactor;

    Verifier verifier;
    std::vector<double> serial_ms, pipelined_ms, speedup, ideal_ms, efficiency, h2d, kernel, d2h;
    int iteration = 0;
    run_repeats(o, [&](bool warmup) {
        run.progress.detail(warmup ? "warm-up" : "repeat " + std::to_string(++iteration));
        // Every pass starts from the input on the host (for managed memory: pages on the host).
        std::memcpy(buf.host(), input.data(), bytes);
        PassTimes ser = run_pass(s, buf, serial, batches, batch_elems, "serial");
        verifier.floats("serial result", buf.host<float>(), expected.data(), n);
        std::memcpy(buf.host(), input.data(), bytes);
        PassTimes pip = run_pass(s, buf, pipelined, batches, batch_elems, "pipelined");
        verifier.floats("pipelined result", buf.host<float>(), expected.data(), n);
        if (warmup)
            return;
        const double slowest = std::max({ser.h2d_ms, ser.kernel_ms, ser.d2h_ms});
        const double ideal = ser.h2d_ms + ser.kernel_ms + ser.d2h_ms + (batches - 1) * slowest;
        serial_ms.push_back(ser.total_ms);
        pipelined_ms.push_back(pip.total_ms);
        speedup.push_back(ser.total_ms / pip.total_ms);
        ideal_ms.push_back(ideal);
        efficiency.push_back(ideal / pip.total_ms * 100.0);
        h2d.push_back(ser.h2d_ms);
        kernel.push_back(ser.kernel_ms);
        d2h.push_back(ser.d2h_ms);
    });
    r.verification = verifier.result();

    const std::uint64_t batch_bytes = batch_elems * sizeof(float);
    r.figures.push_back(time_figure("serial", serial_ms, bytes, "all batches on one stream"));
    r.figures.push_back(time_figure("pipelined", pipelined_ms, bytes,
                                    "batches spread over " + std::to_string(o.streams) + " streams"));
    r.figures.push_back(value_figure("speed-up", "x", speedup, "serial / pipelined"));
    r.figures.push_back(time_figure("ideal pipelined", ideal_ms, bytes,
                                    "one batch's stages + (batches - 1) x the slowest stage"));
    r.figures.push_back(value_figure("overlap efficiency", "%", efficiency, "ideal pipelined / pipelined"));
    r.figures.push_back(time_figure("h2d per batch", h2d, batch_bytes, copy_note(s)));
    r.figures.push_back(time_figure("kernel per batch", kernel, batch_bytes, "scale"));
    r.figures.push_back(time_figure("d2h per batch", d2h, batch_bytes, copy_note(s)));
}

} // namespace xfer_tool

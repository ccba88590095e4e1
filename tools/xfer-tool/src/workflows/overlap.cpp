// SPDX-License-Identifier: Apache-2.0
// overlap: --batches batches of copy in -> scale kernel -> copy out, first serially on one
// stream, then pipelined over --streams streams so copies in both directions and compute can
// run at once. Reports both times, the speed-up and the overlap efficiency: the ideal pipelined
// time (one batch's three stages, then one slowest stage per further batch, from the serial
// run's per-stage medians) divided by the measured pipelined time.
#include "workflows/overlap.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

constexpr float kFactor = 1.5f;

struct BatchSpans {
    Span in, kernel, out;
};

// Queues every batch (batch i on streams[i % streams.size()]), waits, and times the pass.
PassTimes run_pass(Testbed &s, const Buffer &buf, const std::vector<std::unique_ptr<Stream>> &streams,
                   std::size_t batches, std::size_t batch_elems, const std::string &tag) {
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
    for (const auto &st : streams) st->synchronize();
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

std::size_t checked_batches(int batches) {
    if (batches < 1) throw std::invalid_argument("overlap: batches must be at least 1, not " + std::to_string(batches));
    return static_cast<std::size_t>(batches);
}

} // namespace

OverlapPasses::OverlapPasses(Testbed &s, std::uint64_t bytes, int batches, int streams, std::uint64_t seed)
    : s_(s), batches_(checked_batches(batches)), batch_elems_(float_count(bytes / batches_, "--size / --batches")),
      n_(batch_elems_ * batches_), buf_(s.context(), n_ * sizeof(float)), input_(n_), expected_(n_) {
    if (streams < 1) throw std::invalid_argument("overlap: streams must be at least 1, not " + std::to_string(streams));
    serial_.push_back(std::make_unique<Stream>(s.context()));
    s.timeline().name_stream(*serial_[0], "serial stream");
    for (int i = 0; i < streams; ++i) {
        pipelined_.push_back(std::make_unique<Stream>(s.context()));
        s.timeline().name_stream(*pipelined_.back(), "stream " + std::to_string(i + 1));
    }
    RandomData(seed).fill_floats(input_.data(), n_);
    for (std::size_t i = 0; i < n_; ++i) expected_[i] = input_[i] * kFactor;
}

OverlapSample OverlapPasses::run(Verifier &verifier) {
    OverlapSample out;
    // Every pass starts from the input on the host (for managed memory: pages on the host).
    std::memcpy(buf_.host(), input_.data(), bytes());
    out.serial = run_pass(s_, buf_, serial_, batches_, batch_elems_, "serial");
    verifier.floats("serial result", buf_.host<float>(), expected_.data(), n_);
    std::memcpy(buf_.host(), input_.data(), bytes());
    out.pipelined = run_pass(s_, buf_, pipelined_, batches_, batch_elems_, "pipelined");
    verifier.floats("pipelined result", buf_.host<float>(), expected_.data(), n_);
    const PassTimes &ser = out.serial;
    const double slowest = std::max({ser.h2d_ms, ser.kernel_ms, ser.d2h_ms});
    out.ideal_ms = ser.h2d_ms + ser.kernel_ms + ser.d2h_ms + (batches_ - 1) * slowest;
    return out;
}

void run_overlap(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    OverlapPasses passes(s, o.size, o.batches, o.streams, derive_seed(o.seed, 5));
    const std::size_t bytes = passes.bytes();
    add_size_param(r, "size", bytes);
    add_size_param(r, "batch size", passes.batch_bytes());
    add_count_param(r, "batches", passes.batches());
    add_count_param(r, "streams", static_cast<std::uint64_t>(o.streams));
    add_common_params(r, o);

    Verifier verifier;
    std::vector<double> serial_ms, pipelined_ms, speedup, ideal_ms, efficiency, h2d, kernel, d2h;
    int iteration = 0;
    run_repeats(o, [&](bool warmup) {
        run.progress.detail(warmup ? "warm-up" : "repeat " + std::to_string(++iteration));
        const OverlapSample t = passes.run(verifier);
        if (warmup) return;
        serial_ms.push_back(t.serial.total_ms);
        pipelined_ms.push_back(t.pipelined.total_ms);
        speedup.push_back(t.speedup());
        ideal_ms.push_back(t.ideal_ms);
        efficiency.push_back(t.efficiency() * 100.0);
        h2d.push_back(t.serial.h2d_ms);
        kernel.push_back(t.serial.kernel_ms);
        d2h.push_back(t.serial.d2h_ms);
    });
    r.verification = verifier.result();

    const std::uint64_t batch_bytes = passes.batch_bytes();
    r.figures.push_back(time_figure("serial", serial_ms, bytes, "all batches on one stream"));
    r.figures.push_back(
        time_figure("pipelined", pipelined_ms, bytes, "batches spread over " + std::to_string(o.streams) + " streams"));
    r.figures.push_back(value_figure("speed-up", "x", speedup, "serial / pipelined"));
    r.figures.push_back(
        time_figure("ideal pipelined", ideal_ms, bytes, "one batch's stages + (batches - 1) x the slowest stage"));
    r.figures.push_back(value_figure("overlap efficiency", "%", efficiency, "ideal pipelined / pipelined"));
    r.figures.push_back(time_figure("h2d per batch", h2d, batch_bytes, copy_note(s)));
    r.figures.push_back(time_figure("kernel per batch", kernel, batch_bytes, "scale"));
    r.figures.push_back(time_figure("d2h per batch", d2h, batch_bytes, copy_note(s)));
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// peer: device-to-device bandwidth between every ordered pair of devices of the backend, as a
// matrix of GB/s (source row, destination column), xfer_memcpy_peer_async against the raw
// call side by side in one repeats loop, and both verified.
//
// Decisions:
//  - The copy is issued on a stream of the destination's context: the destination's copy
//    engine reads from the source device, the setup nvbandwidth's device_to_device_memcpy_read_ce
//    measures, so the two figures can be put next to each other.
//  - The raw call is cudaMemcpyPeerAsync on the same device pointers and stream (CUDA), or
//    std::memcpy between the two emulated device views on the calling thread (host), as
//    bandwidth does for the host backend. On backends whose device views are not cudaMalloc
//    memory (managed, zero-copy) the raw peer call does not apply: n/a with the reason.
//  - Timed with an event pair on the copying stream after the warm-up; each pair's source is
//    filled with its own random data, and the destination is cleared and checked after one
//    xfer copy and after one raw copy, so a call that moved nothing cannot pass.
//  - With fewer than two devices there is no pair: the workflow reports that, unverified (not
//    an error), so `run peer --backend all` on a one-GPU machine still completes.
#include <cstring>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>

#include "copy_paths.hpp"
#include "random_data.hpp"
#include "side_by_side.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

int backend_device_count(const std::string &backend) {
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (backend == info.name) return info.available ? info.device_count : 0;
    }
    return 0;
}

// One device of the matrix: its context (the testbed's own for the testbed's device), a
// buffer, a stream that copies into this device, and the events that time it.
struct PeerDevice {
    int ordinal = 0;
    std::unique_ptr<Context> owned;
    const Context *ctx = nullptr;
    std::unique_ptr<Buffer> buf;
    std::unique_ptr<Stream> stream;
    std::unique_ptr<Event> start, stop;

    PeerDevice(const Testbed &s, int device, std::size_t bytes) : ordinal(device) {
        if (device == s.context().device()) {
            ctx = &s.context();
        } else {
            owned = std::make_unique<Context>(s.backend(), device);
            ctx = owned.get();
        }
        buf = std::make_unique<Buffer>(*ctx, bytes);
        stream = std::make_unique<Stream>(*ctx);
        start = std::make_unique<Event>(*ctx);
        stop = std::make_unique<Event>(*ctx);
    }

    // Queues `work` on this device's stream between the two events; waits; returns ms.
    template <class Work>
    double time(Work work) const {
        check(xfer_event_record(start->get(), stream->get()), "xfer_event_record");
        work();
        check(xfer_event_record(stop->get(), stream->get()), "xfer_event_record");
        stream->synchronize();
        float ms = 0;
        check(xfer_event_elapsed_ms(start->get(), stop->get(), &ms), "xfer_event_elapsed_ms");
        return ms;
    }

    // Sets the whole device view from the host view (untimed, waits).
    void push_host_view() const { check(xfer_copy(buf->get(), XFER_TO_DEVICE, 0, buf->bytes()), "xfer_copy(h2d)"); }
    void pull_device_view() const { check(xfer_copy(buf->get(), XFER_TO_HOST, 0, buf->bytes()), "xfer_copy(d2h)"); }
    void clear() const {
        std::memset(buf->host(), 0, buf->bytes());
        push_host_view();
    }
};

enum class PeerRaw { none, cuda_peer, host_memcpy };

PeerRaw raw_peer_for(const Testbed &s) {
    if (s.context().device_kind() == XFER_DEVICE_KIND_HOST) return PeerRaw::host_memcpy;
    if (s.shared_view() || s.no_copy() || s.migrates()) return PeerRaw::none;
    return PeerRaw::cuda_peer;
}

std::string raw_peer_text(PeerRaw raw) {
    switch (raw) {
    case PeerRaw::cuda_peer:
        return "cudaMemcpyPeerAsync(device views), the destination's stream";
    case PeerRaw::host_memcpy:
        return "std::memcpy between the emulated device views, calling thread";
    case PeerRaw::none:
        break;
    }
    return "n/a: the device views are not cudaMalloc memory (managed or mapped), so cudaMemcpyPeerAsync does not "
           "apply";
}

class PeerMatrix {
  public:
    PeerMatrix(Testbed &s, std::size_t bytes, int devices) : s_(s), bytes_(bytes) {
        for (int d = 0; d < devices; ++d) devices_.push_back(std::make_unique<PeerDevice>(s, d, bytes));
    }

    int size() const { return static_cast<int>(devices_.size()); }
    const PeerDevice &device(int d) const { return *devices_.at(static_cast<std::size_t>(d)); }

    // A peer copy counts in its stream's context, the destination's: the copies into the
    // other devices are in the contexts opened here (fresh, so all of them are this workflow's).
    // The runner reads the context the workflow runs on.
    void add_other_devices_paths(PathBreakdown &out) const {
        for (const auto &d : devices_)
            if (d->owned) add_copy_paths(out, *d->owned);
    }

    void xfer_copy(const PeerDevice &dst, const PeerDevice &src) const {
        check(xfer_memcpy_peer_async(dst.ctx->get(), dst.buf->device(), src.ctx->get(), src.buf->device(), bytes_,
                                     dst.stream->get()),
              "xfer_memcpy_peer_async");
    }

    // Times the raw call; host memcpy runs on this thread (steady clock), CUDA on dst's stream.
    double raw_copy(PeerRaw raw, const PeerDevice &dst, const PeerDevice &src) const {
        if (raw == PeerRaw::host_memcpy) {
            const Clock::time_point t0 = Clock::now();
            std::memcpy(dst.buf->device(), src.buf->device(), bytes_);
            return ms_between(t0, Clock::now());
        }
        return dst.time([&] {
            s_.kernels().raw_memcpy_peer_async(dst.buf->device(), dst.ordinal, src.buf->device(), src.ordinal, bytes_,
                                               dst.ordinal, *dst.stream);
        });
    }

  private:
    Testbed &s_;
    std::size_t bytes_;
    std::vector<std::unique_ptr<PeerDevice>> devices_;
};

std::string pair_name(int src, int dst) { return "peer " + std::to_string(src) + "->" + std::to_string(dst); }

// The xfer medians as nvbandwidth prints them, one row per source, "-" on the diagonal:
// "GB/s median, row = source: 0: - 48.1 | 1: 47.9 -".
std::string matrix_text(const std::vector<Figure> &xfer_rows, int devices) {
    std::ostringstream out;
    out << "GB/s median, row = source, column = destination:";
    std::size_t next = 0;
    for (int from = 0; from < devices; ++from) {
        out << (from ? " |" : "") << " " << from << ":";
        for (int to = 0; to < devices; ++to) {
            if (from == to) {
                out << " -";
                continue;
            }
            const Figure &f = xfer_rows.at(next++);
            out << " ";
            if (f.stats)
                out << std::fixed << std::setprecision(1) << f.stats->median;
            else
                out << "n/a";
        }
    }
    return out.str();
}

} // namespace

void run_peer(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t bytes = static_cast<std::size_t>(o.size);
    add_size_param(r, "size", bytes);
    add_common_params(r, o);
    const int devices = backend_device_count(s.backend());
    add_count_param(r, "devices", static_cast<std::uint64_t>(devices));
    if (devices < 2) {
        r.figures.push_back(absent_figure("peer", "GB/s", bytes,
                                          "backend '" + s.backend() + "' has " + std::to_string(devices) +
                                              " device(s): no pair to copy between (host: set XFER_HOST_DEVICES=2)"));
        r.verification.detail = "not run: fewer than two devices";
        return;
    }
    const PeerRaw raw = raw_peer_for(s);
    add_text_param(r, "raw call", raw_peer_text(raw));
    add_text_param(r, "stream", "the destination's (the destination's copy engine reads the source)");

    PeerMatrix m(s, bytes, devices);
    Verifier verifier;
    std::string access;
    std::vector<Figure> xfer_rows, raw_rows, ratio_rows;
    for (int from = 0; from < m.size(); ++from) {
        for (int to = 0; to < m.size(); ++to) {
            if (from == to) continue;
            const PeerDevice &src = m.device(from);
            const PeerDevice &dst = m.device(to);
            const std::string name = pair_name(from, to);
            run.progress.detail(name);
            int direct = 0;
            check(xfer_device_can_access_peer(dst.ctx->get(), src.ctx->get(), &direct), "xfer_device_can_access_peer");
            access += (access.empty() ? "" : ", ") + std::to_string(from) + "->" + std::to_string(to) +
                      (direct ? " direct" : " staged");

            const std::uint64_t seed = derive_seed(o.seed, 300 + static_cast<std::uint64_t>(from * m.size() + to));
            RandomData(seed).fill_bytes(src.buf->host(), bytes);
            src.push_host_view();

            std::vector<double> xfer_ms, raw_ms;
            int turn = 0;
            run_repeats(o, [&](bool warmup) {
                // Which call goes first alternates, so neither always inherits the other's state.
                const bool raw_first = raw != PeerRaw::none && turn++ % 2 == 1;
                double r_ms = raw_first ? m.raw_copy(raw, dst, src) : 0.0;
                const double x_ms = dst.time([&] { m.xfer_copy(dst, src); });
                if (raw != PeerRaw::none && !raw_first) r_ms = m.raw_copy(raw, dst, src);
                if (warmup) return;
                xfer_ms.push_back(x_ms);
                if (raw != PeerRaw::none) raw_ms.push_back(r_ms);
            });

            // Each call on its own must have moved the source's bytes.
            dst.clear();
            dst.time([&] { m.xfer_copy(dst, src); });
            dst.pull_device_view();
            verifier.bytes_from_seed(name + " xfer", dst.buf->host(), bytes, seed);
            if (raw != PeerRaw::none) {
                dst.clear();
                m.raw_copy(raw, dst, src);
                dst.pull_device_view();
                verifier.bytes_from_seed(name + " raw", dst.buf->host(), bytes, seed);
            }

            xfer_rows.push_back(rate_figure(name, bytes, xfer_ms, direct ? "" : "staged through host memory"));
            xfer_rows.back().bytes = bytes;
            std::optional<std::vector<double>> raw_opt;
            if (raw != PeerRaw::none) raw_opt = raw_ms;
            std::vector<Figure> f = side_by_side_figures(name, bytes, xfer_ms, raw_opt, raw_peer_text(raw));
            raw_rows.push_back(f.at(0));
            ratio_rows.push_back(f.at(1));
        }
    }
    add_text_param(r, "access", access);
    add_text_param(r, "matrix", matrix_text(xfer_rows, m.size()));
    for (const auto *rows : {&xfer_rows, &raw_rows, &ratio_rows})
        r.figures.insert(r.figures.end(), rows->begin(), rows->end());
    m.add_other_devices_paths(r.paths);
    r.verification = verifier.result();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "bench/measure_support.hpp"

#include <cmath>
#include <cstring>

#include "side_by_side.hpp"
#include "units.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {

const char *direction_name(xfer_direction dir) { return dir == XFER_TO_DEVICE ? "h2d" : "d2h"; }

xfer_copy_kind copy_kind(xfer_direction dir) {
    return dir == XFER_TO_DEVICE ? XFER_COPY_HOST_TO_DEVICE : XFER_COPY_DEVICE_TO_HOST;
}

std::optional<Stats> finite_stats(const std::vector<double> &values) {
    std::vector<double> finite;
    for (double v : values)
        if (std::isfinite(v)) finite.push_back(v);
    if (finite.empty()) return std::nullopt;
    return summarize(finite);
}

BenchFigure bench_rate(const std::string &label, std::uint64_t bytes, const std::vector<double> &ms) {
    std::vector<double> rates;
    for (double t : ms)
        if (t > 0.0) rates.push_back(gb_per_s(bytes, t));
    return {label, "GB/s", finite_stats(rates)};
}

BenchFigure bench_value(const std::string &label, const std::string &unit, const std::vector<double> &values) {
    return {label, unit, finite_stats(values)};
}

void set_ratio(BenchRow &row, const std::string &unit, const std::string &note, const std::vector<double> &values) {
    row.ratio_unit = unit;
    row.ratio_note = note;
    row.ratio = finite_stats(values);
}

void set_speed_ratio(BenchRow &row, const Pairs &ms, const std::string &reference) {
    set_ratio(row, "x", reference + " time / xfer time, per pair (> 1: xfer faster)",
              speed_ratios(ms.xfer, ms.reference));
}

double xfer_copy_ms(BenchEnv::Backend &b, const Buffer &buf, xfer_direction dir, std::size_t bytes,
                    const std::string &name) {
    return time_on_stream(*b.testbed, *b.stream, name, copy_category(*b.testbed), bytes, [&] {
        check(xfer_copy_async(buf.get(), dir, 0, bytes, b.stream->get()), "xfer_copy_async");
    });
}

void verify_copy(RawPath &raw, const Buffer &buf, const std::vector<unsigned char> &expected, xfer_direction dir,
                 std::size_t bytes, const std::string &what, Verifier &verifier,
                 const std::function<void()> &run_copy) {
    if (dir == XFER_TO_DEVICE) {
        raw.clear_device(buf.device(), bytes);
        run_copy();
        std::memset(buf.host(), 0, bytes);
        raw.copy(buf.host(), buf.device(), bytes, XFER_COPY_DEVICE_TO_HOST);
    } else {
        std::memset(buf.host(), 0, bytes);
        run_copy();
    }
    verifier.bytes(what, buf.host(), expected.data(), bytes);
    // Compared again after the verifier: its test hook (XFER_TOOL_CORRUPT) changes the view.
    if (std::memcmp(buf.host(), expected.data(), bytes) != 0) {
        std::memcpy(buf.host(), expected.data(), bytes);
        raw.copy(buf.device(), buf.host(), bytes, XFER_COPY_HOST_TO_DEVICE);
    }
}

} // namespace xfer::tool

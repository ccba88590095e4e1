// SPDX-License-Identifier: Apache-2.0
#include "workflows/workflow_support.hpp"

#include <cstring>
#include <stdexcept>

#include "units.hpp"

namespace xfer::tool {

double ms_between(Clock::time_point t0, Clock::time_point t1) {
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

void add_size_param(WorkflowResult &r, const std::string &name, std::uint64_t bytes) {
    r.parameters.push_back({name, format_size(bytes), bytes});
}

void add_count_param(WorkflowResult &r, const std::string &name, std::uint64_t value) {
    r.parameters.push_back({name, std::to_string(value), value});
}

void add_text_param(WorkflowResult &r, const std::string &name, const std::string &text) {
    r.parameters.push_back({name, text, std::nullopt});
}

void add_common_params(WorkflowResult &r, const RunOptions &o) {
    add_count_param(r, "repeats", static_cast<std::uint64_t>(o.repeats));
    add_text_param(r, "repeats policy", o.fixed_repeats ? "fixed" : "adaptive (at most repeats; see --help)");
    add_count_param(r, "warmup", static_cast<std::uint64_t>(o.warmup));
    add_text_param(r, "seed", std::to_string(o.seed)); // a string: JSON tools round numbers above 2^53
}

const char *copy_category(const Testbed &s) {
    if (s.no_copy()) return "no-copy";
    if (s.migrates()) return "prefetch";
    return "copy";
}

std::string copy_note(const Testbed &s) {
    if (s.no_copy()) return "no copy (mapped): the device reads host memory in place; the call only keeps stream order";
    if (s.migrates()) return "prefetch: pages migrate (each timed prefetch starts with the range on the other side)";
    return "";
}

Span queue_copy(Testbed &s, const Buffer &buf, xfer_direction dir, std::size_t offset, std::size_t bytes,
                const Stream &stream, const std::string &name) {
    Span span = s.timeline().begin(stream, name, copy_category(s), bytes);
    check(xfer_copy_async(buf.get(), dir, offset, bytes, stream.get()), "xfer_copy_async");
    s.timeline().end(span);
    return span;
}

Span queue_copy(Testbed &s, const Buffer &buf, xfer_direction dir, const Stream &stream, const std::string &name) {
    return queue_copy(s, buf, dir, 0, buf.bytes(), stream, name);
}

void place_for(Testbed &s, const Buffer &buf, xfer_direction next, const Stream &stream) {
    if (!s.migrates()) return;
    xfer_direction away = next == XFER_TO_DEVICE ? XFER_TO_HOST : XFER_TO_DEVICE;
    Span span = queue_copy(s, buf, away, stream, away == XFER_TO_HOST ? "place on host" : "place on device");
    stream.synchronize();
    s.timeline().finish(span);
}

void clear_buffer(Testbed &s, const Buffer &buf, const Stream &stream) {
    std::memset(buf.host(), 0, buf.bytes());
    if (s.shared_view()) return;
    Span span = queue_copy(s, buf, XFER_TO_DEVICE, stream, "clear device view");
    stream.synchronize();
    s.timeline().finish(span);
}

void fetch_to_host(Testbed &s, const Buffer &buf, const Stream &stream) {
    Span span = queue_copy(s, buf, XFER_TO_HOST, stream, "fetch result");
    stream.synchronize();
    s.timeline().finish(span);
}

std::size_t float_count(std::uint64_t bytes, const char *option) {
    if (bytes < sizeof(float))
        throw std::invalid_argument(std::string(option) + " " + format_size(bytes) +
                                    " holds no float element; use at least 4 B");
    return static_cast<std::size_t>(bytes / sizeof(float));
}

RepeatCounter::RepeatCounter(const RunOptions &o) : o_(o), start_(Clock::now()) {}

bool RepeatCounter::more(const std::vector<double> *samples) {
    throw_if_interrupted();
    if (done_ >= o_.repeats) return false;
    const int min_samples = o_.quick ? AdaptiveRepeats::quick_min_samples : AdaptiveRepeats::min_samples;
    if (!o_.fixed_repeats && done_ >= min_samples) {
        if (ms_between(start_, Clock::now()) >= AdaptiveRepeats::seconds * 1e3) return false;
        if (samples && !samples->empty()) {
            const Stats st = summarize(*samples);
            if (st.mean > 0 && st.stddev / st.mean < AdaptiveRepeats::steady_spread) return false;
        }
    }
    ++done_;
    return true;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "timeline.hpp"

#include <stdexcept>

namespace xfer::tool {

Timeline::Timeline(const Context &ctx, Tracer *tracer, int pid) : ctx_(ctx), tracer_(tracer), pid_(pid), anchor_(ctx) {}

void Timeline::name_stream(const Stream &s, const std::string &track) { tracks_[s.get()] = track; }

void Timeline::reanchor(const Stream &s) {
    check(xfer_event_record(anchor_.get(), s.get()), "xfer_event_record(anchor)");
    check(xfer_event_synchronize(anchor_.get()), "xfer_event_synchronize(anchor)");
    if (tracer_) anchor_host_us_ = tracer_->host_us(std::chrono::steady_clock::now());
}

std::size_t Timeline::acquire_event() {
    if (!free_events_.empty()) {
        std::size_t i = free_events_.back();
        free_events_.pop_back();
        return i;
    }
    events_.emplace_back(ctx_);
    return events_.size() - 1;
}

Span Timeline::begin(const Stream &s, std::string name, std::string category, std::uint64_t bytes) {
    Open open;
    open.stream = s.get();
    open.start = acquire_event();
    open.end = acquire_event();
    open.name = std::move(name);
    open.category = std::move(category);
    open.bytes = bytes;
    open.used = true;
    check(xfer_event_record(events_[open.start].get(), s.get()), "xfer_event_record(span start)");
    Span span;
    if (!free_spans_.empty()) {
        span.id = free_spans_.back();
        free_spans_.pop_back();
        spans_[span.id] = std::move(open);
    } else {
        spans_.push_back(std::move(open));
        span.id = spans_.size() - 1;
    }
    return span;
}

void Timeline::end(Span span) {
    if (span.id >= spans_.size() || !spans_[span.id].used)
        throw std::logic_error("Timeline::end of a span that is not open");
    const Open &open = spans_[span.id];
    check(xfer_event_record(events_[open.end].get(), open.stream), "xfer_event_record(span end)");
}

float Timeline::elapsed(std::size_t from, std::size_t to) const {
    float ms = 0;
    check(xfer_event_elapsed_ms(from == static_cast<std::size_t>(-1) ? anchor_.get() : events_[from].get(),
                                events_[to].get(), &ms),
          "xfer_event_elapsed_ms");
    return ms;
}

SpanTime Timeline::finish(Span span) {
    if (span.id >= spans_.size() || !spans_[span.id].used)
        throw std::logic_error("Timeline::finish of a span that is not open");
    Open &open = spans_[span.id];
    SpanTime t;
    t.duration_ms = elapsed(open.start, open.end);
    t.start_ms = elapsed(static_cast<std::size_t>(-1), open.start);
    t.end_ms = t.start_ms + t.duration_ms;
    if (tracer_) {
        auto it = tracks_.find(open.stream);
        int tid = tracer_->track(pid_, it != tracks_.end() ? it->second : "stream");
        nlohmann::json args = {{"workflow", workflow_}};
        if (open.bytes) args["bytes"] = open.bytes;
        tracer_->add(pid_, tid, open.name, open.category, anchor_host_us_ + t.start_ms * 1000.0, t.duration_ms * 1000.0,
                     std::move(args));
    }
    free_events_.push_back(open.start);
    free_events_.push_back(open.end);
    open.used = false;
    free_spans_.push_back(span.id);
    return t;
}

void Timeline::host_span(const std::string &name, const std::string &category, std::chrono::steady_clock::time_point t0,
                         std::chrono::steady_clock::time_point t1, std::uint64_t bytes) {
    if (!tracer_) return;
    double start = tracer_->host_us(t0);
    nlohmann::json args = {{"workflow", workflow_}};
    if (bytes) args["bytes"] = bytes;
    tracer_->add(pid_, tracer_->track(pid_, "host"), name, category, start, tracer_->host_us(t1) - start,
                 std::move(args));
}

} // namespace xfer::tool

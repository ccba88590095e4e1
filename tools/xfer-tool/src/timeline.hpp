// SPDX-License-Identifier: Apache-2.0
// Times stream work with events and, when tracing, places it on the trace's common timeline.
//
// Every timed operation is a span: begin() records an event on the stream, the caller queues
// the work, end() records a second event. After synchronising, finish() returns the span's
// duration (and its start/end relative to the anchor, so spans on several streams can be
// combined, e.g. a pipelined total) and hands the span to the tracer. The same events serve
// timing and tracing, so --trace adds no work to the streams.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace.hpp"
#include "xfer_handles.hpp"

namespace xfer::tool {

struct Span {
    std::size_t id = static_cast<std::size_t>(-1);
};

struct SpanTime {
    double start_ms = 0;    // relative to the last anchor
    double end_ms = 0;      // relative to the last anchor
    double duration_ms = 0; // end - start, measured directly between the span's two events
};

class Timeline {
  public:
    // tracer may be null (no --trace); pid is the tracer process of this context.
    Timeline(const Context &ctx, Tracer *tracer, int pid);

    // The trace track of a stream ("stream 0", ...); unnamed streams show as "stream".
    void name_stream(const Stream &s, const std::string &track);
    // Workflow name attached to the spans that follow (trace args).
    void set_workflow(const std::string &workflow) { workflow_ = workflow; }

    // Records the anchor event on s and waits for it: later span times are relative to it.
    // Re-anchoring per workflow keeps float millisecond offsets precise in long runs.
    void reanchor(const Stream &s);

    Span begin(const Stream &s, std::string name, std::string category, std::uint64_t bytes = 0);
    void end(Span span);
    // Only after the span's stream work has completed.
    SpanTime finish(Span span);

    // Host-side work (a blocking call, host verification) on the "host" track.
    void host_span(const std::string &name, const std::string &category, std::chrono::steady_clock::time_point t0,
                   std::chrono::steady_clock::time_point t1, std::uint64_t bytes = 0);

  private:
    struct Open {
        xfer_stream stream = nullptr;
        std::size_t start = 0, end = 0; // indices into events_
        std::string name, category;
        std::uint64_t bytes = 0;
        bool used = false;
    };
    std::size_t acquire_event();
    float elapsed(std::size_t from, std::size_t to) const;

    const Context &ctx_;
    Tracer *tracer_;
    int pid_;
    std::string workflow_;
    Event anchor_;
    double anchor_host_us_ = 0;
    std::vector<Event> events_;
    std::vector<std::size_t> free_events_;
    std::vector<Open> spans_;
    std::vector<std::size_t> free_spans_;
    std::map<xfer_stream, std::string> tracks_;
};

} // namespace xfer::tool

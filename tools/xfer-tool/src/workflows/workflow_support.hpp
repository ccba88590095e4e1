// SPDX-License-Identifier: Apache-2.0
// Building blocks the workflows share: timed copies, residency of migrating (managed) memory,
// repeats with warm-up, and figure construction.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "figures.hpp"
#include "interrupt.hpp"
#include "result.hpp"
#include "run_options.hpp"
#include "testbed.hpp"

namespace xfer::tool {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point t0, Clock::time_point t1);

void add_size_param(WorkflowResult &r, const std::string &name, std::uint64_t bytes);
void add_count_param(WorkflowResult &r, const std::string &name, std::uint64_t value);
void add_text_param(WorkflowResult &r, const std::string &name, const std::string &text);
// repeats, warmup and seed: every workflow records them.
void add_common_params(WorkflowResult &r, const RunOptions &o);

// What a buffer copy is on this backend, for trace categories and report notes.
const char *copy_category(const Testbed &s); // "copy" | "prefetch" | "no-copy"
std::string copy_note(const Testbed &s);     // "" | "prefetch: ..." | "no copy (mapped): ..."

// Queues a timed buffer copy (a span around xfer_copy_async).
Span queue_copy(Testbed &s, const Buffer &buf, xfer_direction dir, std::size_t offset, std::size_t bytes,
                const Stream &stream, const std::string &name);
Span queue_copy(Testbed &s, const Buffer &buf, xfer_direction dir, const Stream &stream, const std::string &name);

// Times stream work: `queue()` queues it on `stream` between a span's events; waits for the
// stream and returns the events' milliseconds (traced under `name` and `category`).
template <class Queue>
double time_on_stream(Testbed &s, const Stream &stream, const std::string &name, const std::string &category,
                      std::uint64_t bytes, Queue queue) {
    Span span = s.timeline().begin(stream, name, category, bytes);
    queue();
    s.timeline().end(span);
    stream.synchronize();
    return s.timeline().finish(span).duration_ms;
}

// On a migrating backend (managed), moves the buffer's pages to where a copy in `next`
// starts from (to the host before a timed H2D prefetch, to the device before a D2H one), so
// each timed prefetch moves the whole range. Untimed, traced, waits. No-op elsewhere.
void place_for(Testbed &s, const Buffer &buf, xfer_direction next, const Stream &stream);

// Fills both views with zeros, so a result that is never written cannot pass verification.
void clear_buffer(Testbed &s, const Buffer &buf, const Stream &stream);

// Copies the whole buffer to its host view (untimed, traced) and waits.
void fetch_to_host(Testbed &s, const Buffer &buf, const Stream &stream);

// Floats that fit in `bytes`; throws std::invalid_argument naming the option when < 1.
std::size_t float_count(std::uint64_t bytes, const char *option);

// Decides when a measurement's timed repeats stop: exactly options.repeats with --repeats
// given, else early as AdaptiveRepeats (run_options.hpp) says.
class RepeatCounter {
  public:
    explicit RepeatCounter(const RunOptions &o);
    // True while another timed repeat should run; `samples` (may be null) are the ones so far.
    // Throws Interrupted after SIGINT / SIGTERM: every repeat loop stops there.
    bool more(const std::vector<double> *samples = nullptr);

  private:
    const RunOptions &o_;
    int done_ = 0;
    Clock::time_point start_;
};

// Runs body(warmup) options.warmup times with warmup = true, then the timed repeats (see
// RepeatCounter) with warmup = false, collecting what the timed runs return.
template <class Body>
std::vector<double> repeat(const RunOptions &o, Body body) {
    for (int i = 0; i < o.warmup; ++i) {
        throw_if_interrupted();
        body(true);
    }
    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(o.repeats));
    RepeatCounter counter(o);
    while (counter.more(&samples)) samples.push_back(body(false));
    return samples;
}

// The same for bodies that collect several figures themselves: body(warmup) returns nothing
// (their early stop is by time only).
template <class Body>
void run_repeats(const RunOptions &o, Body body) {
    for (int i = 0; i < o.warmup; ++i) {
        throw_if_interrupted();
        body(true);
    }
    RepeatCounter counter(o);
    while (counter.more()) body(false);
}

} // namespace xfer::tool

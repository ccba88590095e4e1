// SPDX-License-Identifier: Apache-2.0
// Chrome Trace Event output (--trace FILE): every copy, kernel and prefetch of a run as a
// complete ("X") event, one process per backend context and one track (tid) per stream, so
// Perfetto or chrome://tracing shows where copies and kernels overlap.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "output_file.hpp"

namespace xfer::tool {

class Tracer {
  public:
    Tracer();

    // A process row (one per backend context); returns its pid.
    int add_process(const std::string &name);
    // The track of `name` (e.g. "stream 1", "host") in process pid; created on first use.
    int track(int pid, const std::string &name);

    // One complete event. ts_us is on the tracer's clock (microseconds since its creation).
    void add(int pid, int tid, std::string name, std::string category, double ts_us, double dur_us,
             nlohmann::json args);

    // Microseconds from the tracer's creation to t (the common timeline of all processes).
    double host_us(std::chrono::steady_clock::time_point t) const;

    std::size_t event_count() const { return events_.size(); }
    nlohmann::json to_json() const;
    // Throws std::runtime_error naming the file (and the OS reason) if it cannot be written.
    // The file appears whole or not at all (OutputFile).
    void write(const std::string &path) const;
    // Opens `path` for writing now (before measuring), or throws as write() does; nothing is
    // at `path` until the file is committed.
    static std::unique_ptr<OutputFile> open_trace_file(const std::string &path);
    // Writes to a stream opened by open_trace_file; `path` names it in messages. The caller
    // commits the file.
    void write(std::ostream &out, const std::string &path) const;

  private:
    struct Span {
        int pid, tid;
        std::string name, category;
        double ts_us, dur_us;
        nlohmann::json args;
    };
    std::chrono::steady_clock::time_point epoch_;
    std::vector<std::string> processes_;                // index + 1 = pid
    std::map<std::pair<int, std::string>, int> tracks_; // (pid, name) -> tid
    std::vector<Span> events_;
};

} // namespace xfer::tool

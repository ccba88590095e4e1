// SPDX-License-Identifier: Apache-2.0
#include "trace.hpp"

#include <algorithm>
#include <stdexcept>

namespace xfer::tool {

Tracer::Tracer() : epoch_(std::chrono::steady_clock::now()) {}

int Tracer::add_process(const std::string &name) {
    processes_.push_back(name);
    return static_cast<int>(processes_.size());
}

int Tracer::track(int pid, const std::string &name) {
    auto key = std::make_pair(pid, name);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    int tid = 1;
    for (const auto &entry : tracks_)
        if (entry.first.first == pid) ++tid;
    tracks_.emplace(key, tid);
    return tid;
}

void Tracer::add(int pid, int tid, std::string name, std::string category, double ts_us, double dur_us,
                 nlohmann::json args) {
    // Events on different streams are timed against one anchor; clock granularity can make a
    // zero-length operation come out a hair negative, which viewers reject.
    events_.push_back(Span{pid, tid, std::move(name), std::move(category), std::max(0.0, ts_us), std::max(0.0, dur_us),
                           std::move(args)});
}

double Tracer::host_us(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - epoch_).count();
}

nlohmann::json Tracer::to_json() const {
    nlohmann::json events = nlohmann::json::array();
    for (std::size_t i = 0; i < processes_.size(); ++i)
        events.push_back({{"ph", "M"},
                          {"name", "process_name"},
                          {"pid", static_cast<int>(i + 1)},
                          {"tid", 0},
                          {"ts", 0},
                          {"dur", 0},
                          {"args", {{"name", processes_[i]}}}});
    for (const auto &entry : tracks_)
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", entry.first.first},
                          {"tid", entry.second},
                          {"ts", 0},
                          {"dur", 0},
                          {"args", {{"name", entry.first.second}}}});
    for (const Span &s : events_) {
        nlohmann::json e = {{"ph", "X"},       {"name", s.name}, {"cat", s.category}, {"ts", s.ts_us},
                            {"dur", s.dur_us}, {"pid", s.pid},   {"tid", s.tid}};
        if (!s.args.is_null()) e["args"] = s.args;
        events.push_back(std::move(e));
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData",
             {{"generator", std::string("xfer-tool ") + XFER_TOOL_VERSION},
              {"timeline", "device events are placed with xfer_event_elapsed_ms from an anchor event "
                           "synchronised against the host clock; one pid per backend, one tid per stream"}}}};
}

void Tracer::write(const std::string &path) const {
    const std::unique_ptr<OutputFile> file = open_trace_file(path);
    write(file->stream(), path);
    file->commit();
}

std::unique_ptr<OutputFile> Tracer::open_trace_file(const std::string &path) {
    return std::make_unique<OutputFile>(path, "trace file");
}

void Tracer::write(std::ostream &out, const std::string &path) const {
    out << to_json().dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error("cannot write trace file '" + path + "'");
}

} // namespace xfer::tool

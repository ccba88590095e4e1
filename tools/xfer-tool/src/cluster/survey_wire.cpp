// SPDX-License-Identifier: Apache-2.0
// A rank's report as bytes for rank 0. Not the JSON report: that one is written for readers
// (parameters as numbers without their text, NaN as null, no raw samples unless asked), and a
// merged table or CSV needs exactly what the rank would have printed. CBOR keeps doubles
// bit for bit, NaN included. Every rank runs the same xfer-tool build in practice; the format
// tag turns a mismatched one into a clear message instead of a garbled report.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cluster/survey.hpp"

namespace xfer::tool {
namespace {

using nlohmann::json;

constexpr const char *kFormat = "xfer-tool-survey-rank/1";

json wire(const Stats &s) {
    return {{"min", s.min},   {"median", s.median}, {"max", s.max},      {"samples", s.samples},
            {"mean", s.mean}, {"stddev", s.stddev}, {"values", s.values}};
}

Stats read_stats(const json &j) {
    Stats s;
    s.min = j.at("min").get<double>();
    s.median = j.at("median").get<double>();
    s.max = j.at("max").get<double>();
    s.samples = j.at("samples").get<std::size_t>();
    s.mean = j.at("mean").get<double>();
    s.stddev = j.at("stddev").get<double>();
    s.values = j.at("values").get<std::vector<double>>();
    return s;
}

json wire(const Figure &f) {
    return {{"name", f.name},
            {"unit", f.unit},
            {"bytes", f.bytes},
            {"stats", f.stats ? wire(*f.stats) : json(nullptr)},
            {"note", f.note}};
}

Figure read_figure(const json &j) {
    Figure f;
    f.name = j.at("name").get<std::string>();
    f.unit = j.at("unit").get<std::string>();
    f.bytes = j.at("bytes").get<std::uint64_t>();
    if (!j.at("stats").is_null()) f.stats = read_stats(j.at("stats"));
    f.note = j.at("note").get<std::string>();
    return f;
}

json wire(const Parameter &p) {
    return {{"name", p.name}, {"text", p.text}, {"value", p.value ? json(*p.value) : json(nullptr)}};
}

Parameter read_parameter(const json &j) {
    Parameter p;
    p.name = j.at("name").get<std::string>();
    p.text = j.at("text").get<std::string>();
    if (!j.at("value").is_null()) p.value = j.at("value").get<std::uint64_t>();
    return p;
}

json wire(const DeviceSummary &d) {
    return {{"name", d.name},
            {"kind", d.kind},
            {"ordinal", d.ordinal},
            {"pcie_link", d.pcie_link},
            {"pci_bus_id", d.pci_bus_id},
            {"driver_version", d.driver_version},
            {"runtime_version", d.runtime_version},
            {"numa_node", d.numa_node},
            {"buffer_numa_node", d.buffer_numa_node}};
}

DeviceSummary read_device(const json &j) {
    DeviceSummary d;
    d.name = j.at("name").get<std::string>();
    d.kind = j.at("kind").get<std::string>();
    d.ordinal = j.at("ordinal").get<int>();
    d.pcie_link = j.at("pcie_link").get<std::string>();
    d.pci_bus_id = j.at("pci_bus_id").get<std::string>();
    d.driver_version = j.at("driver_version").get<std::string>();
    d.runtime_version = j.at("runtime_version").get<std::string>();
    d.numa_node = j.at("numa_node").get<int>();
    d.buffer_numa_node = j.at("buffer_numa_node").get<int>();
    return d;
}

json wire(const PathBreakdown &b) {
    json paths = json::array();
    for (const PathUse &p : b.paths)
        paths.push_back({{"path", p.path}, {"copies", p.copies}, {"bytes", p.bytes}, {"host_ns", p.host_ns}});
    return {
        {"measured", b.measured}, {"paths", paths}, {"slow_copies", b.slow_copies}, {"registrations", b.registrations}};
}

PathBreakdown read_paths(const json &j) {
    PathBreakdown b;
    b.measured = j.at("measured").get<bool>();
    // In the order the rank kept them (most bytes first), not re-sorted by add().
    for (const json &p : j.at("paths"))
        b.paths.push_back({p.at("path").get<std::string>(), p.at("copies").get<std::uint64_t>(),
                           p.at("bytes").get<std::uint64_t>(), p.at("host_ns").get<std::uint64_t>()});
    b.slow_copies = j.at("slow_copies").get<std::uint64_t>();
    b.registrations = j.at("registrations").get<std::uint64_t>();
    return b;
}

json wire(const Verification &v) {
    return {{"state", static_cast<int>(v.state)}, {"detail", v.detail}, {"checked", v.checked}};
}

Verification read_verification(const json &j) {
    Verification v;
    const int state = j.at("state").get<int>();
    if (state < 0 || state > static_cast<int>(Verification::State::failed))
        throw std::runtime_error("unknown verification state " + std::to_string(state));
    v.state = static_cast<Verification::State>(state);
    v.detail = j.at("detail").get<std::string>();
    v.checked = j.at("checked").get<std::uint64_t>();
    return v;
}

json wire(const WorkflowResult &r) {
    json parameters = json::array(), figures = json::array();
    for (const Parameter &p : r.parameters) parameters.push_back(wire(p));
    for (const Figure &f : r.figures) figures.push_back(wire(f));
    return {{"workflow", r.workflow},   {"backend", r.backend},   {"device", wire(r.device)},
            {"parameters", parameters}, {"figures", figures},     {"verification", wire(r.verification)},
            {"error", r.error},         {"paths", wire(r.paths)}, {"rank", r.rank},
            {"hostname", r.hostname}};
}

WorkflowResult read_result(const json &j) {
    WorkflowResult r;
    r.workflow = j.at("workflow").get<std::string>();
    r.backend = j.at("backend").get<std::string>();
    r.device = read_device(j.at("device"));
    for (const json &p : j.at("parameters")) r.parameters.push_back(read_parameter(p));
    for (const json &f : j.at("figures")) r.figures.push_back(read_figure(f));
    r.verification = read_verification(j.at("verification"));
    r.error = j.at("error").get<std::string>();
    r.paths = read_paths(j.at("paths"));
    r.rank = j.at("rank").get<int>();
    r.hostname = j.at("hostname").get<std::string>();
    return r;
}

json wire(const RankInfo &i) {
    return {{"rank", i.rank}, {"local_rank", i.local_rank}, {"hostname", i.hostname}, {"cpu_model", i.cpu_model},
            {"time", i.time}, {"error", i.error},           {"failed", i.failed}};
}

RankInfo read_rank_info(const json &j) {
    RankInfo i;
    i.rank = j.at("rank").get<int>();
    i.local_rank = j.at("local_rank").get<int>();
    i.hostname = j.at("hostname").get<std::string>();
    i.cpu_model = j.at("cpu_model").get<std::string>();
    i.time = j.at("time").get<std::string>();
    i.error = j.at("error").get<std::string>();
    i.failed = j.at("failed").get<int>();
    return i;
}

} // namespace

std::string to_wire(const RankReport &report) {
    json results = json::array();
    for (const WorkflowResult &r : report.results) results.push_back(wire(r));
    const json j = {{"format", kFormat},
                    {"info", wire(report.info)},
                    {"results", results},
                    {"tool_version", report.tool_version},
                    {"library_version", report.library_version},
                    {"interrupted", report.interrupted}};
    const std::vector<std::uint8_t> bytes = json::to_cbor(j);
    return std::string(bytes.begin(), bytes.end());
}

RankReport from_wire(const std::string &bytes) {
    try {
        const json j = json::from_cbor(bytes);
        if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
            throw std::runtime_error(std::string("not an xfer-tool rank report of format ") + kFormat +
                                     " (a different xfer-tool build on that rank?)");
        RankReport report;
        report.info = read_rank_info(j.at("info"));
        for (const json &r : j.at("results")) report.results.push_back(read_result(r));
        report.tool_version = j.at("tool_version").get<std::string>();
        report.library_version = j.at("library_version").get<std::string>();
        report.interrupted = j.at("interrupted").get<int>();
        return report;
    } catch (const nlohmann::json::exception &e) {
        throw std::runtime_error(std::string("unreadable rank report: ") + e.what());
    }
}

} // namespace xfer::tool

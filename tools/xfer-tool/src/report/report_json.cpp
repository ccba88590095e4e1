// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <stdexcept>

#include "report/report.hpp"

namespace xfer::tool {
namespace {

using nlohmann::json;

constexpr const char *kSchemaId = "xfer-tool-results/1";

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json figure_to_json(const Figure &f, bool with_samples) {
    json j = {{"name", f.name}, {"unit", f.unit}, {"bytes", f.bytes}, {"note", f.note}};
    if (f.stats) {
        j["min"] = number_or_null(f.stats->min);
        j["median"] = number_or_null(f.stats->median);
        j["max"] = number_or_null(f.stats->max);
        j["mean"] = number_or_null(f.stats->mean);
        j["stddev"] = number_or_null(f.stats->stddev);
        j["samples"] = f.stats->samples;
        if (with_samples) {
            json values = json::array();
            for (double v : f.stats->values) values.push_back(number_or_null(v));
            j["values"] = values;
        }
    } else {
        j["min"] = j["median"] = j["max"] = j["mean"] = j["stddev"] = nullptr;
        j["samples"] = 0;
    }
    return j;
}

json text_or_null(const std::string &text) { return text.empty() ? json(nullptr) : json(text); }

json node_or_null(int node) { return node >= 0 ? json(node) : json(nullptr); }

json run_to_json(const RunInfo &run) {
    json config = json::array();
    for (const ConfigValue &c : run.config)
        config.push_back({{"section", c.section}, {"name", c.name}, {"value", c.value}, {"source", c.source}});
    return {{"time", run.time},
            {"host", run.host},
            {"command_line", run.command_line},
            {"cpu_model", text_or_null(run.cpu_model)},
            {"cpu_numa_node", node_or_null(run.cpu_numa_node)},
            {"seed", run.seed},
            {"config", config}};
}

} // namespace

json device_to_json(const DeviceSummary &d) {
    return {{"name", d.name},
            {"kind", d.kind},
            {"ordinal", d.ordinal},
            {"pcie_link", d.pcie_link.empty() ? json(nullptr) : json(d.pcie_link)},
            {"pci_bus_id", d.pci_bus_id},
            {"driver_version", text_or_null(d.driver_version)},
            {"runtime_version", text_or_null(d.runtime_version)},
            {"numa_node", node_or_null(d.numa_node)},
            {"buffer_numa_node", node_or_null(d.buffer_numa_node)}};
}

namespace {

json result_to_json(const WorkflowResult &r, bool with_samples) {
    json params = json::object();
    for (const Parameter &p : r.parameters) params[p.name] = p.value ? json(*p.value) : json(p.text);
    json figures = json::array();
    for (const Figure &f : r.figures) figures.push_back(figure_to_json(f, with_samples));
    json paths = nullptr;
    if (r.paths.measured) {
        paths = json::object();
        for (const PathUse &p : r.paths.paths)
            paths[p.path] = {{"copies", p.copies}, {"bytes", p.bytes}, {"host_ns", p.host_ns}};
    }
    auto count = [&](std::uint64_t v) { return r.paths.measured ? json(v) : json(nullptr); };
    json j = {
        {"workflow", r.workflow},
        {"backend", r.backend},
        {"device", device_to_json(r.device)},
        {"parameters", params},
        {"figures", figures},
        {"verification",
         {{"status", to_string(r.verification.state)},
          {"detail", r.verification.detail},
          {"checked", r.verification.checked}}},
        {"error", r.error.empty() ? json(nullptr) : json(r.error)},
        {"paths", paths},
        {"slow_copies", count(r.paths.slow_copies)},
        {"registrations", count(r.paths.registrations)},
    };
    // Only a survey's results carry them (cluster/survey.hpp).
    if (r.rank >= 0) {
        j["rank"] = r.rank;
        j["hostname"] = r.hostname;
    }
    return j;
}

const json &require(const json &j, const char *key, const std::string &where) {
    if (!j.is_object() || !j.contains(key)) throw std::runtime_error(where + " has no \"" + key + "\"");
    return j.at(key);
}

double number_at(const json &j, const char *key) {
    const json &v = j.at(key);
    return v.is_number() ? v.get<double>() : std::nan("");
}

} // namespace

json report_to_json(const Report &report, bool with_samples) {
    json results = json::array();
    for (const WorkflowResult &r : report.results) results.push_back(result_to_json(r, with_samples));
    json j = {
        {"schema", kSchemaId},
        {"tool",
         {{"name", "xfer-tool"},
          {"version", report.tool_version},
          {"library_version", report.library_version},
          {"commit", report.run.commit.empty() ? "unknown" : report.run.commit}}},
        {"run", run_to_json(report.run)},
        {"units",
         {{"ms", "milliseconds"},
          {"GB/s", "10^9 bytes per second"},
          {"x", "ratio"},
          {"%", "percent"},
          {"bytes", "bytes; sizes print as KiB/MiB/GiB = 2^10/2^20/2^30 bytes"}}},
        {"results", results},
    };
    if (!report.recommendations.empty()) {
        json recs = json::array();
        for (const Recommendation &rec : report.recommendations)
            recs.push_back({{"pattern", rec.pattern},
                            {"backend", rec.backend.empty() ? json(nullptr) : json(rec.backend)},
                            {"basis", rec.basis}});
        j["recommendations"] = recs;
    }
    if (report.survey) j["survey"] = survey_to_json(report);
    return j;
}

Report report_from_json(const json &j) {
    if (!j.is_object() || j.value("schema", "") != kSchemaId)
        throw std::runtime_error(std::string("not an xfer-tool results file (\"schema\" is not \"") + kSchemaId +
                                 "\"): write one with --format json");
    Report report;
    const json &tool = require(j, "tool", "the file");
    report.tool_version = require(tool, "version", "\"tool\"").get<std::string>();
    report.library_version = require(tool, "library_version", "\"tool\"").get<std::string>();
    report.run.commit = tool.value("commit", "");
    if (j.contains("run") && j["run"].is_object()) {
        const json &run = j["run"];
        report.run.time = run.value("time", "");
        report.run.host = run.value("host", "");
        report.run.command_line = run.value("command_line", "");
        if (run.contains("cpu_model") && run["cpu_model"].is_string())
            report.run.cpu_model = run["cpu_model"].get<std::string>();
        if (run.contains("seed") && run["seed"].is_string()) report.run.seed = run["seed"].get<std::string>();
    }
    for (const json &jr : require(j, "results", "the file")) {
        WorkflowResult r;
        r.workflow = require(jr, "workflow", "a result").get<std::string>();
        r.backend = require(jr, "backend", "a result").get<std::string>();
        const json &dev = require(jr, "device", "a result");
        r.device.name = require(dev, "name", "\"device\"").get<std::string>();
        r.device.kind = dev.value("kind", "");
        r.device.ordinal = dev.value("ordinal", 0);
        auto text = [&](const char *key) {
            return dev.contains(key) && dev[key].is_string() ? dev[key].get<std::string>() : std::string();
        };
        r.device.pcie_link = text("pcie_link");
        r.device.driver_version = text("driver_version");
        r.device.runtime_version = text("runtime_version");
        for (const json &jf : require(jr, "figures", "a result")) {
            Figure f;
            f.name = require(jf, "name", "a figure").get<std::string>();
            f.unit = require(jf, "unit", "a figure").get<std::string>();
            f.bytes = jf.value("bytes", std::uint64_t{0});
            f.note = jf.value("note", "");
            if (jf.contains("median") && jf["median"].is_number()) {
                f.stats = Stats{};
                f.stats->min = number_at(jf, "min");
                f.stats->median = number_at(jf, "median");
                f.stats->max = number_at(jf, "max");
                f.stats->samples = jf.value("samples", std::size_t{0});
                // Reports written before mean / stddev existed leave them NaN (unknown).
                if (jf.contains("mean")) f.stats->mean = number_at(jf, "mean");
                if (jf.contains("stddev")) f.stats->stddev = number_at(jf, "stddev");
                if (jf.contains("values") && jf["values"].is_array())
                    for (const json &v : jf["values"])
                        f.stats->values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
            }
            r.figures.push_back(std::move(f));
        }
        const json &ver = require(jr, "verification", "a result");
        const std::string status = require(ver, "status", "\"verification\"").get<std::string>();
        r.verification.state = status == "passed"   ? Verification::State::passed
                               : status == "failed" ? Verification::State::failed
                                                    : Verification::State::not_run;
        r.verification.detail = ver.value("detail", "");
        if (jr.contains("error") && jr["error"].is_string()) r.error = jr["error"].get<std::string>();
        r.rank = jr.value("rank", -1);
        r.hostname = jr.value("hostname", "");
        // Reports written before the path breakdown existed have none: not measured.
        if (jr.contains("paths") && jr["paths"].is_object()) {
            r.paths.measured = true;
            for (const auto &[name, jp] : jr["paths"].items())
                r.paths.add({name, jp.value("copies", std::uint64_t{0}), jp.value("bytes", std::uint64_t{0}),
                             jp.value("host_ns", std::uint64_t{0})});
            r.paths.slow_copies = jr.value("slow_copies", std::uint64_t{0});
            r.paths.registrations = jr.value("registrations", std::uint64_t{0});
        }
        report.results.push_back(std::move(r));
    }
    if (j.contains("recommendations") && j["recommendations"].is_array())
        for (const json &rec : j["recommendations"])
            report.recommendations.push_back({rec.value("pattern", ""),
                                              rec.contains("backend") && rec["backend"].is_string()
                                                  ? rec["backend"].get<std::string>()
                                                  : std::string(),
                                              rec.value("basis", "")});
    return report;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdio>

#include "report/report.hpp"
#include "units.hpp"

namespace xfer::tool {
namespace {

// RFC 4180: quote fields holding a separator, a quote or a line break; double the quotes.
std::string field(const std::string &text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

std::string number(double v) {
    if (!std::isfinite(v)) return "";
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

// The run's metadata as '#' comment lines before the header (--csv-metadata; pandas:
// comment='#'); the JSON report carries the same in "run" and "survey".
void write_csv_comments(std::ostream &out, const Report &report) {
    const RunInfo &run = report.run;
    out << "# xfer-tool " << report.tool_version << ", libxfer " << report.library_version << ", commit "
        << (run.commit.empty() ? "unknown" : run.commit) << "\n";
    out << "# time: " << run.time << "\n# host: " << run.host << "\n# command: " << run.command_line << "\n";
    out << "# cpu: " << run.cpu_model
        << (run.cpu_numa_node >= 0 ? ", NUMA node " + std::to_string(run.cpu_numa_node) : "")
        << "\n# seed: " << run.seed << "\n";
    for (const ConfigValue &c : run.config)
        out << "# config: " << (c.section.empty() ? "" : c.section + ".") << c.name << " = " << c.value
            << (c.source.empty() ? "" : " (" + c.source + ")") << "\n";
    if (report.survey) write_survey_csv_comments(out, report);
    out << "# units: GB/s = 10^9 bytes/s; ms = milliseconds; x = ratio; sizes in KiB/MiB/GiB = 2^10/2^20/2^30 bytes; "
           "path rows: count, bytes, ns = nanoseconds\n";
}

} // namespace

void write_csv_header(std::ostream &out, const Report &report, CsvMetadata metadata) {
    if (metadata == CsvMetadata::comments) write_csv_comments(out, report);
    // A survey's rows say which rank and host measured them; a plain run's columns stay as they were.
    if (report.survey) out << "rank,hostname,";
    out << "tool_version,library_version,backend,device,pcie_link,driver_version,runtime_version,workflow,figure,unit,"
           "bytes,size,min,median,max,mean,stddev,samples,verification,note\n";
}

void write_csv_result(std::ostream &out, const Report &report, const WorkflowResult &r) {
    const std::string rank = report.survey ? std::to_string(r.rank) + "," + field(r.hostname) + "," : "";
    const std::string prefix = rank + field(report.tool_version) + "," + field(report.library_version) + "," +
                               field(r.backend) + "," + field(r.device.name) + "," + field(r.device.pcie_link) + "," +
                               field(r.device.driver_version) + "," + field(r.device.runtime_version) + "," +
                               field(r.workflow) + ",";
    const std::string verification = r.error.empty() ? to_string(r.verification.state) : std::string("error");
    for (const Figure &f : r.figures) {
        out << prefix << field(f.name) << "," << field(f.unit) << "," << f.bytes << ","
            << field(f.bytes ? format_size(f.bytes) : "") << ",";
        if (f.stats)
            out << number(f.stats->min) << "," << number(f.stats->median) << "," << number(f.stats->max) << ","
                << number(f.stats->mean) << "," << number(f.stats->stddev) << "," << f.stats->samples;
        else
            out << ",,,,,0";
        out << "," << verification << "," << field(f.note) << "\n";
    }
    // The path breakdown as counted figures: one sample, the count in min / median / max / mean,
    // written as an integer (%.9g would round byte counts above 10^9).
    auto counted = [&](const std::string &name, const char *unit, std::uint64_t value, const char *note) {
        const std::string v = std::to_string(value);
        out << prefix << field(name) << "," << unit << ",0,," << v << "," << v << "," << v << "," << v << ",0,1,"
            << verification << "," << field(note) << "\n";
    };
    if (r.paths.measured) {
        for (const PathUse &p : r.paths.paths) {
            const std::string name = "path:" + p.path + ":";
            counted(name + "copies", "count", p.copies, "copies, batch entries and pieces that took the path");
            counted(name + "bytes", "bytes", p.bytes, "bytes that took the path");
            counted(name + "host_ns", "ns", p.host_ns, "host time inside the calls that queued them");
        }
        counted("paths:slow_copies", "count", r.paths.slow_copies, "pieces that took a slow path (xfer_path_is_slow)");
        counted("paths:registrations", "count", r.paths.registrations,
                "ranges page-locked (xfer_register, the registration cache)");
    }
    if (!r.error.empty()) out << prefix << ",,0,,,,,,,0," << verification << "," << field(r.error) << "\n";
    if (r.verification.state == Verification::State::failed)
        out << prefix << "verification,,0,,,,,,,0,failed," << field(r.verification.detail) << "\n";
}

void write_csv(std::ostream &out, const Report &report, CsvMetadata metadata) {
    write_csv_header(out, report, metadata);
    for (const WorkflowResult &r : report.results) write_csv_result(out, report, r);
}

} // namespace xfer::tool

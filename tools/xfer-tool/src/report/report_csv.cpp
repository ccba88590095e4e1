#include "report/report.hpp"
#include "units.hpp"

#include <cstdio>

namespace xfer_tool {
namespace {

// RFC 4180: quote fields holding a separator, a quote or a line break; double the quotes.
std::string field(const std::string &text)
{
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

std::string number(double v)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

} // namespace

void write_csv(std::ostream &out, const Report &report)
{
    // Units are a column of their own; the header names the convention for GB/s and sizes.
    out << "tool_version,library_version,backend,device,pcie_link,workflow,figure,unit,bytes,size,min,median,max,"
           "samples,verification,note\n";
    for (const WorkflowResult &r : report.results) {
        const std::string prefix = field(report.tool_version) + "," + field(report.library_version) + "," +
                                   field(r.backend) + "," + field(r.device.name) + "," + field(r.device.pcie_link) +
                                   "," + field(r.workflow) + ",";
        const std::string verification =
            r.error.empty() ? to_string(r.verification.state) : std::string("error");
        for (const Figure &f : r.figures) {
            out << prefix << field(f.name) << "," << field(f.unit) << "," << f.bytes << ","
                << field(f.bytes ? format_size(f.bytes) : "") << ",";
            if (f.stats)
                out << number(f.stats->min) << "," << number(f.stats->median) << "," << number(f.stats->max) << ","
                    << f.stats->samples;
            else
                out << ",,,0";
            out << "," << verification << "," << field(f.note) << "\n";
        }
        if (!r.error.empty())
            out << prefix << ",,0,,,,,0," << verification << "," << field(r.error) << "\n";
        if (r.verification.state == Verification::State::failed)
            out << prefix << "verification,,0,,,,,0,failed," << field(r.verification.detail) << "\n";
    }
}

} // namespace xfer_tool

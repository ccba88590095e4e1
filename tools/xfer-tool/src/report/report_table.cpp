#include "compare.hpp"
#include "report/report.hpp"
#include "text_table.hpp"
#include "units.hpp"

namespace xfer_tool {

const char *const kUnitsLegend =
    "Units: ms = milliseconds; GB/s = 10^9 bytes/s; x = ratio; sizes in KiB/MiB/GiB = 2^10/2^20/2^30 bytes.";

std::string link_or_na(const DeviceSummary &d)
{
    return d.pcie_link.empty() ? "n/a" : d.pcie_link;
}

namespace {

void write_result(std::ostream &out, const WorkflowResult &r)
{
    out << "== " << r.workflow << " on " << r.backend << ": ";
    if (r.device.name.empty())
        out << "(backend not opened)\n";
    else
        out << r.device.name << " (device " << r.device.ordinal << ", PCIe link " << link_or_na(r.device) << ")\n";
    if (!r.parameters.empty()) {
        out << "   ";
        for (std::size_t i = 0; i < r.parameters.size(); ++i)
            out << (i ? "  " : "") << r.parameters[i].name << "=" << r.parameters[i].text;
        out << '\n';
    }
    TextTable table({{"figure"},
                     {"size", TextTable::Align::right},
                     {"unit"},
                     {"min", TextTable::Align::right},
                     {"median", TextTable::Align::right},
                     {"max", TextTable::Align::right},
                     {"note"}});
    for (const Figure &f : r.figures) {
        std::string size = f.bytes ? format_size(f.bytes) : "";
        if (f.stats)
            table.add_row({f.name, size, f.unit, format_value(f.stats->min), format_value(f.stats->median),
                           format_value(f.stats->max), f.note});
        else
            table.add_row({f.name, size, f.unit, "-", "-", "-", f.note});
    }
    if (!table.empty())
        table.print(out, "   ");
    if (!r.error.empty())
        out << "   ERROR: " << r.error << '\n';
    switch (r.verification.state) {
    case Verification::State::passed:
        out << "   verification: passed (" << r.verification.detail << ")\n";
        break;
    case Verification::State::failed:
        out << "   verification: FAILED: " << r.verification.detail << '\n';
        break;
    case Verification::State::not_run:
        out << "   verification: not run\n";
        break;
    }
    out << '\n';
}

} // namespace

void write_table(std::ostream &out, const Report &report)
{
    out << "xfer-tool " << report.tool_version << " (libxfer " << report.library_version << ")\n"
        << kUnitsLegend << "\n\n";
    for (const WorkflowResult &r : report.results)
        write_result(out, r);
    if (!report.recommendations.empty())
        write_comparison(out, report);
}

} // namespace xfer_tool

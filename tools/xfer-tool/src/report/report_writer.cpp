#include "report/report.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

namespace xfer_tool {

void write_report(const Report &report, const std::string &format, const std::string &output)
{
    if (format != "table" && format != "csv" && format != "json")
        throw std::invalid_argument("unknown report format '" + format + "' (use table, csv or json)");
    std::ofstream file;
    if (!output.empty()) {
        file.open(output);
        if (!file)
            throw std::runtime_error("cannot open '" + output + "' for writing");
    }
    std::ostream &out = output.empty() ? std::cout : file;
    if (format == "table")
        write_table(out, report);
    else if (format == "csv")
        write_csv(out, report);
    else
        out << report_to_json(report).dump(2) << '\n';
    out.flush();
    if (!out)
        throw std::runtime_error("cannot write the report to '" + (output.empty() ? "stdout" : output) + "'");
}

} // namespace xfer_tool

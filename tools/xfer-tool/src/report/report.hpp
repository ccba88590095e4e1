// Report writers: a readable table (default), CSV (one row per figure) and JSON (one schema
// for every workflow: schema/results.schema.json). Units are explicit in all three.
#pragma once

#include "result.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace xfer_tool {

// The units legend every report carries.
extern const char *const kUnitsLegend;

void write_table(std::ostream &out, const Report &report);
void write_csv(std::ostream &out, const Report &report);
nlohmann::json report_to_json(const Report &report);
// Inverse of report_to_json (for `plot`); throws std::runtime_error naming what is missing.
Report report_from_json(const nlohmann::json &json);

// Writes the report in `format` (table | csv | json) to `output` ("" = stdout). Throws
// std::runtime_error when the file cannot be written, std::invalid_argument for a bad format.
void write_report(const Report &report, const std::string &format, const std::string &output);

// "Gen5 x16" or "n/a".
std::string link_or_na(const DeviceSummary &d);

} // namespace xfer_tool

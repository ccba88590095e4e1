// SPDX-License-Identifier: Apache-2.0
#include "settings_table.hpp"

#include "run_info.hpp"
#include "text_table.hpp"

namespace xfer::tool {

void print_settings_table(std::ostream &out, const std::vector<xfer::Setting> &settings, const std::string &indent) {
    TextTable table(
        {{"value"}, {"is"}, {"effective", TextTable::Align::right}, {"source"}, {"default", TextTable::Align::right}});
    for (const xfer::Setting &s : settings) {
        table.add_row(
            {s.name, s.derived ? "derived" : "parameter", s.value, param_source_name(s.source), s.default_value});
    }
    table.print(out, indent);
}

} // namespace xfer::tool

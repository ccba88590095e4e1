// SPDX-License-Identifier: Apache-2.0
// Column-aligned plain-text tables for the readable reports.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace xfer::tool {

class TextTable {
  public:
    enum class Align { left, right };
    struct Column {
        std::string header;
        Align align = Align::left;
    };
    explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
    void add_row(std::vector<std::string> cells); // missing cells print empty
    // Every line starts with `indent`; columns are separated by two spaces.
    void print(std::ostream &out, const std::string &indent = "") const;
    bool empty() const { return rows_.empty(); }

  private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

} // namespace xfer::tool

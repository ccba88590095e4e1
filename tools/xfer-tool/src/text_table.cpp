// SPDX-License-Identifier: Apache-2.0
#include "text_table.hpp"

#include <algorithm>

namespace xfer::tool {

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream &out, const std::string &indent) const {
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
        width[c] = columns_[c].header.size();
        for (const auto &row : rows_) width[c] = std::max(width[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string> &cells) {
        std::string text = indent;
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            const std::string &cell = cells[c];
            std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
            bool last = c + 1 == columns_.size();
            if (columns_[c].align == Align::right)
                text += pad + cell;
            else
                text += cell + (last ? "" : pad);
            if (!last) text += "  ";
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out << text << '\n';
    };
    std::vector<std::string> headers;
    for (const auto &c : columns_) headers.push_back(c.header);
    line(headers);
    for (const auto &row : rows_) line(row);
}

} // namespace xfer::tool

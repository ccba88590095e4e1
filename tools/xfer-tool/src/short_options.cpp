// SPDX-License-Identifier: Apache-2.0
#include "short_options.hpp"

#include <algorithm>

namespace xfer::tool {

const std::vector<std::pair<std::string, char>> &short_options() {
    static const std::vector<std::pair<std::string, char>> letters = {
        {"backend", 'b'}, {"device", 'd'},  {"format", 'f'}, {"help", 'h'},    {"output", 'o'},
        {"quiet", 'q'},   {"repeats", 'r'}, {"size", 's'},   {"targets", 't'}, {"warmup", 'w'},
    };
    return letters;
}

std::string option_key(const std::string &long_name) {
    const auto &letters = short_options();
    const auto it = std::find_if(letters.begin(), letters.end(),
                                 [&](const std::pair<std::string, char> &o) { return o.first == long_name; });
    return it == letters.end() ? long_name : long_name + "," + it->second;
}

} // namespace xfer::tool

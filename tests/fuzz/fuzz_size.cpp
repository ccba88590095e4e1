// SPDX-License-Identifier: Apache-2.0
// Size strings, ints and bools as a user writes them in XFER_CONFIG or the environment.
// Beyond "no crash": a size accepted once must read back the same from its canonical form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "xfer_config/value_parse.hpp"

using namespace xfer::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    std::string why;
    if (auto bytes = parse_size(text, &why)) {
        std::string again;
        auto canonical = normalize_value("size", text, &again);
        if (!canonical || parse_size(*canonical, &again) != bytes) std::abort();
    } else if (why.empty()) {
        std::abort(); // a refusal must say why
    }
    why.clear();
    if (!parse_int(text, &why) && why.empty()) std::abort();
    why.clear();
    if (!parse_bool(text, &why) && why.empty()) std::abort();
    return 0;
}

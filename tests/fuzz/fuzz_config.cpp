// SPDX-License-Identifier: Apache-2.0
// The XFER_CONFIG reader (xfer_config/config_file.hpp) on arbitrary bytes, and every
// value it yields through each parameter type, as xfer_open does with file and environment
// values. Failures must be Error(XFER_ERROR_CONFIG) -- never a crash, never another status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "xfer_config/config_file.hpp"
#include "xfer_config/status_error.hpp"
#include "xfer_config/value_parse.hpp"

using namespace xfer::core;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    try {
        std::istringstream in(text);
        ConfigFile file = parse_config(in, "fuzz.conf");
        for (const ConfigEntry &e : file.entries) {
            if (e.line < 1 || e.key.empty()) std::abort();
            for (const char *type : {"int", "size", "bool", "string"}) {
                std::string why;
                (void)normalize_value(type, e.value, &why);
            }
        }
    } catch (const Error &e) {
        if (e.status() != XFER_ERROR_CONFIG) std::abort();
    }
    // The whole input as one environment value of each type.
    for (const char *type : {"int", "size", "bool", "string"}) {
        std::string why;
        (void)normalize_value(type, text, &why);
    }
    return 0;
}

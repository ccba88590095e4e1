// SPDX-License-Identifier: Apache-2.0
// Which backend xfer_open(NULL, ...) opens, and why, by the rule xfer.h documents: the one
// XFER_BACKEND names, else the one the configuration file's `backend` key names, else the
// first available of pinned, pageable, managed, zerocopy, host. `list` marks it and `run`
// says it before its workflows when no --backend was given.
#pragma once

#include <string>
#include <vector>

#include <xfer/xfer.h>

namespace xfer::tool {

struct BackendChoice {
    std::string name;   // the backend chosen; "" when nothing names one and none is available
    std::string reason; // "named by XFER_BACKEND", "the first available of pinned, ...", ...
    bool opens = false; // false: the named backend is missing or unavailable, or none is available
};

// The effective top-level `backend` key: its value ("" = not set) and where it came from.
struct NamedBackend {
    std::string value;
    xfer_param_source source = XFER_PARAM_DEFAULT;
    std::string config_file; // the XFER_CONFIG file, for a value from the file
};

// The choice among `found` (every backend on the search path, in search order, as
// xfer_backend_get_info lists them).
BackendChoice choose_backend(const std::vector<xfer_backend_info> &found, const NamedBackend &named);

// The choice on this machine: the library's backends and configuration. Throws XferError.
BackendChoice default_backend();

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// Loads a CUDA backend plugin directly (without libxfer) with core services that capture what
// the plugin reports, to test the plugin side of the ABI on its own.
#pragma once

#include <string>

#include <xfer/xfer_backend.h>

namespace xfer::test {

struct DirectPlugin {
    const xfer_backend_table *table = nullptr;
    std::string load_error; // dlerror() text when it could not be loaded
};

// Loads lib/xfer/libxfer-backend-<name>.so of this build once (plugins stay loaded, as in
// the core) and calls its entry point with capturing services.
DirectPlugin load_plugin_directly(const std::string &name);

// The message the plugin last passed to set_error on this thread, and its status; reset().
struct CapturedError {
    xfer_status status = XFER_SUCCESS;
    std::string message;
    int calls = 0;
};
CapturedError &captured_error();
void reset_captured_error();
const xfer_core_services *capturing_services();

} // namespace xfer::test

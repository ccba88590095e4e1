// SPDX-License-Identifier: Apache-2.0
// The core's services as seen by one CUDA plugin, and the one way a plugin reports a failure.
#pragma once

#include <xfer/xfer_backend.h>

namespace xfer::cuda {

// Remembered by the plugin's entry point; each plugin links its own copy of this library,
// so each plugin has its own pointer.
void set_core_services(const xfer_core_services *core) noexcept;

// Reports `status` with a printf-style message through core->set_error and returns `status`,
// so a failure is one line: `return fail(XFER_ERROR_..., "...", ...)`. Never throws.
xfer_status fail(xfer_status status, const char *format, ...) noexcept
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

}  // namespace xfer::cuda

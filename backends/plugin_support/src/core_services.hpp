// SPDX-License-Identifier: Apache-2.0
// The core's services as xfer_backend_entry handed them (set_core_services), for this
// library's own files.
#pragma once

#include <xfer/xfer_backend.h>

namespace xfer::plugin {
const xfer_core_services *core_services() noexcept;
}

// SPDX-License-Identifier: Apache-2.0
// What the host backend's contexts share within the process, as contexts on one GPU share it:
// each emulated device's memory account, and the views of every live buffer.
#pragma once

#include <cstdint>
#include <memory>

#include <xfer/xfer_backend.h>

namespace xfer::host {

class DeviceMemoryAccount;
class LiveViews;

// The account of emulated device `device` with `capacity` bytes (from_param: the device_memory
// parameter set it; else half the physical RAM). Every context open on one device shares its
// account, so two contexts together never allocate more than the device holds. A device keeps
// its capacity while any context or buffer of it lives: a context asking for another one gets
// XFER_ERROR_CONFIG (reported) and nothing. A child process created by fork() starts with no
// device open.
xfer_status open_device_account(int device, std::uint64_t capacity, bool from_param,
                                std::shared_ptr<DeviceMemoryAccount> *out);

// The views of every live buffer of every host context in the process. A raw copy queued on
// one context's stream may read or write a buffer of another context (its views are ordinary
// host pointers); finding the buffer here lets the copy hold its storage, so xfer_free or
// xfer_close of the other context defers the release until the copy has run.
std::shared_ptr<LiveViews> process_views();

} // namespace xfer::host

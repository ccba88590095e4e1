// SPDX-License-Identifier: Apache-2.0
// The tool's names for the owning C++ handles: the public header-only layer <xfer/xfer.hpp>
// (bindings/cpp), so the tool exercises what users get.
//
// Why exceptions inside the tool: a workflow is a long sequence of API calls; throwing one
// XferError that names the failing call and carries xfer_last_error() keeps every workflow
// readable, and the runner turns it into a reported error and an exit status.
#pragma once

#include <xfer/xfer.hpp>

namespace xfer::tool {

using XferError = xfer::Error;
using xfer::Buffer;
using xfer::check; // throws XferError("<call>: <STATUS>: <xfer_last_error()>")
using xfer::Context;
using xfer::describe_failure; // "<call>: <STATUS>: <detail>" for reports
using xfer::Event;
using xfer::Stream;

} // namespace xfer::tool

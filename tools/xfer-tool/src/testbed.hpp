// SPDX-License-Identifier: Apache-2.0
// One backend context with what every workflow needs alongside it: device description,
// kernels for its device kind, and the timeline that times (and traces) stream work.
#pragma once

#include <memory>
#include <string>

#include "kernels.hpp"
#include "result.hpp"
#include "timeline.hpp"
#include "xfer_handles.hpp"

namespace xfer::tool {

class Testbed {
  public:
    // Throws XferError when the backend cannot be opened or has no kernels.
    Testbed(const std::string &backend, int device, Tracer *tracer);

    const Context &context() const { return ctx_; }
    const std::string &backend() const { return ctx_.backend(); }
    const DeviceSummary &device() const { return device_; }
    Kernels &kernels() { return *kernels_; }
    Timeline &timeline() { return timeline_; }
    // A stream of this context that the timeline anchors on between workflows.
    const Stream &anchor_stream() const { return anchor_stream_; }

    // XFER_CAP_* of the backend, by meaning.
    bool shared_view() const { return ctx_.caps() & XFER_CAP_SHARED_VIEW; }
    bool migrates() const { return ctx_.caps() & XFER_CAP_MIGRATES; }
    bool no_copy() const { return ctx_.caps() & XFER_CAP_NO_COPY; }

  private:
    Context ctx_; // first: destroyed last, after every object of the context
    DeviceSummary device_;
    std::unique_ptr<Kernels> kernels_;
    Stream anchor_stream_;
    Timeline timeline_;
};

DeviceSummary summarize_device(const xfer_device_info &info);
// "Gen5 x16", or "" when the backend does not know the link.
std::string pcie_link_text(const xfer_device_info &info);

} // namespace xfer::tool

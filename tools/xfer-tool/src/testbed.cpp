// SPDX-License-Identifier: Apache-2.0
#include "testbed.hpp"

#include <cstring>

#include "run_info.hpp"

namespace xfer::tool {

std::string pcie_link_text(const xfer_device_info &info) {
    if (info.pcie_generation <= 0 && info.pcie_width <= 0) return "";
    return "Gen" + std::to_string(info.pcie_generation) + " x" + std::to_string(info.pcie_width);
}

DeviceSummary summarize_device(const xfer_device_info &info) {
    DeviceSummary d;
    d.name = info.name;
    d.kind = info.kind == XFER_DEVICE_KIND_CUDA ? "cuda" : "host";
    d.ordinal = info.ordinal;
    d.pcie_link = pcie_link_text(info);
    d.pci_bus_id = info.pci_bus_id;
    d.driver_version = cuda_version_text(info.driver_version);
    d.runtime_version = cuda_version_text(info.runtime_version);
    d.numa_node = pci_numa_node(d.pci_bus_id);
    return d;
}

namespace {

// A backend without device_info (an optional plugin entry) still runs every workflow.
DeviceSummary describe_device(const Context &ctx) {
    xfer_device_info info{};
    xfer_status st = xfer_device_get_info(ctx.get(), &info);
    if (st == XFER_ERROR_NOT_SUPPORTED) {
        DeviceSummary d;
        d.name = ctx.backend() + " device " + std::to_string(ctx.device()) + " (no device info)";
        d.kind = ctx.device_kind() == XFER_DEVICE_KIND_CUDA ? "cuda" : "host";
        d.ordinal = ctx.device();
        return d;
    }
    check(st, "xfer_device_get_info");
    return summarize_device(info);
}

int trace_process(Tracer *tracer, const Context &ctx) {
    return tracer ? tracer->add_process("xfer " + ctx.backend() + " (device " + std::to_string(ctx.device()) + ")") : 0;
}

} // namespace

Testbed::Testbed(const std::string &backend, int device, Tracer *tracer)
    : ctx_(backend, device), device_(describe_device(ctx_)), kernels_(make_kernels(ctx_)), anchor_stream_(ctx_),
      timeline_(ctx_, tracer, trace_process(tracer, ctx_)) {
    timeline_.name_stream(anchor_stream_, "anchor");
    timeline_.reanchor(anchor_stream_);
    // Where this backend's host memory lands (first touch), for the report; unknown is fine.
    try {
        Buffer probe(ctx_, 4096);
        std::memset(probe.host(), 1, 4096);
        device_.buffer_numa_node = numa_node_of(probe.host());
    } catch (const std::exception &) {
        device_.buffer_numa_node = -1;
    }
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// `xfer-tool list`: every backend found (available or not, and why), the devices, and the
// effective configuration parameters with value, source and help (as libfabric's fi_info).
#include <cstdio>
#include <iostream>
#include <set>
#include <vector>

#include "backend_choice.hpp"
#include "commands.hpp"
#include "run_info.hpp"
#include "settings_table.hpp"
#include "testbed.hpp"
#include "text_table.hpp"
#include "units.hpp"
#include "xfer_handles.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {
namespace {

const char *kind_name(xfer_device_kind kind) { return kind == XFER_DEVICE_KIND_CUDA ? "cuda" : "host"; }

// Every backend found, whatever XFER_BACKEND or the configuration names; '*' marks the one
// xfer_open(NULL, ...) opens (the program's default), and the line below says why.
void print_backends(const std::vector<xfer_backend_info> &list, const BackendChoice &choice) {
    std::cout << "Backends (plugin search order; * = the one opened when none is named: xfer_open(NULL, ...), "
                 "xfer-tool run):\n";
    if (list.empty()) {
        std::cout << "   none found (searched XFER_PLUGIN_PATH, the configured plugin_path, lib/xfer next to "
                     "libxfer.so)\n\n";
        return;
    }
    TextTable table({{""},
                     {"backend"},
                     {"available"},
                     {"devices", TextTable::Align::right},
                     {"kind"},
                     {"abi"},
                     {"description / reason"}});
    bool marked = false; // one mark, on the entry xfer_open uses (a shadowing file of the name stays unmarked)
    for (const xfer_backend_info &b : list) {
        std::string abi = b.abi_major ? std::to_string(b.abi_major) + "." + std::to_string(b.abi_minor) : "-";
        const bool mark = !marked && choice.name == b.name && (b.available || !choice.opens);
        marked = marked || mark;
        table.add_row({mark ? "*" : "", b.name, b.available ? "yes" : "no", std::to_string(b.device_count),
                       kind_name(b.device_kind), abi,
                       b.available ? b.description : std::string("unavailable: ") + b.reason});
    }
    table.print(std::cout, "   ");
    std::cout << "   selected: " << (choice.name.empty() ? "none" : choice.name) << ": " << choice.reason
              << (choice.opens ? "" : "; xfer_open(NULL, ...) fails") << "\n";
    for (const xfer_backend_info &b : list) std::cout << "   " << b.name << ": " << b.path << "\n";
    std::cout << "\n";
}

void print_device(const std::string &via, int ordinal) {
    std::cout << "   device " << ordinal << " (opened with backend " << via << ")";
    try {
        Context ctx(via, ordinal);
        xfer_device_info d = ctx.device_info();
        std::cout << ": " << d.name << "\n";
        TextTable table({{"property"}, {"value"}});
        table.add_row({"kind", kind_name(d.kind)});
        table.add_row({"memory", format_size(d.total_memory) + " total, " + format_size(d.free_memory) + " free"});
        if (d.kind == XFER_DEVICE_KIND_CUDA)
            table.add_row(
                {"compute capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)});
        table.add_row({d.kind == XFER_DEVICE_KIND_CUDA ? "multiprocessors" : "hardware threads",
                       std::to_string(d.multiprocessors)});
        std::string link = pcie_link_text(d);
        table.add_row({"PCIe link", (link.empty() ? "n/a" : link) +
                                        (d.pci_bus_id[0] ? std::string(" (bus ") + d.pci_bus_id + ")" : "")});
        table.add_row({"copy engines (asyncEngineCount)", std::to_string(d.async_engine_count)});
        table.add_row({"concurrentManagedAccess", std::to_string(d.concurrent_managed_access)});
        table.add_row({"canMapHostMemory", std::to_string(d.can_map_host_memory)});
        table.add_row({"unifiedAddressing", std::to_string(d.unified_addressing)});
        if (d.driver_version || d.runtime_version)
            table.add_row({"CUDA driver / runtime",
                           std::to_string(d.driver_version) + " / " + std::to_string(d.runtime_version)});
        table.print(std::cout, "     ");
    } catch (const XferError &e) {
        std::cout << ": cannot describe it: " << e.what() << "\n";
    }
}

// One description per physical device: CUDA backends share the GPUs, so the first available
// backend of each device kind describes them.
void print_devices(const std::vector<xfer_backend_info> &list) {
    std::cout << "Devices:\n";
    std::set<xfer_device_kind> seen;
    for (const xfer_backend_info &b : list) {
        if (!b.available || seen.count(b.device_kind)) continue;
        seen.insert(b.device_kind);
        for (int d = 0; d < b.device_count; ++d) print_device(b.name, d);
    }
    if (seen.empty()) std::cout << "   none: no backend is available\n";
    std::cout << "\n";
}

void print_parameters() {
    int count = 0;
    check(xfer_param_count(&count), "xfer_param_count");
    std::cout << "Configuration (effective values; source: default, file = XFER_CONFIG, env):\n";
    TextTable table({{"key"}, {"value"}, {"source"}, {"default"}, {"environment"}, {"type"}, {"help"}});
    for (int i = 0; i < count; ++i) {
        xfer_param_info p{};
        check(xfer_param_get_info(i, &p), "xfer_param_get_info");
        std::string key = *p.section ? std::string("[") + p.section + "] " + p.name : p.name;
        table.add_row({key, p.value, param_source_name(p.source), p.default_value, p.env, p.type, p.help});
    }
    table.print(std::cout, "   ");
}

// What each available backend's context uses on its first device: its parameters and the values
// it derives, with where each came from (calibration, default, file, environment). Opening a
// CUDA backend's context calibrates the GPU the first time (about a second), as any program's
// first open would.
void print_context_settings(const std::vector<xfer_backend_info> &list) {
    std::cout << "\nValues each backend's context uses (parameters, and the values it derives from this machine's "
                 "calibration or its defaults):\n";
    bool any = false;
    for (const xfer_backend_info &b : list) {
        if (!b.available) continue;
        any = true;
        try {
            Context ctx(b.name, -1);
            std::cout << "   " << b.name << " on device " << ctx.device() << ":\n";
            print_settings_table(std::cout, ctx.settings(), "     ");
        } catch (const XferError &e) {
            std::cout << "   " << b.name << ": cannot be opened: " << e.what() << "\n";
        }
    }
    if (!any) std::cout << "   none: no backend is available\n";
}

} // namespace

int run_list() {
    try {
        std::cout << "xfer-tool " << XFER_TOOL_VERSION << " (libxfer " << library_version() << ")\n\n";
        const std::vector<xfer_backend_info> list = xfer::backends();
        print_backends(list, default_backend());
        print_devices(list);
        print_parameters();
        print_context_settings(list);
        std::cout.flush();
        return kExitOk;
    } catch (const XferError &e) {
        std::cout.flush();
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return kExitError;
    }
}

} // namespace xfer::tool

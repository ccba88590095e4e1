// SPDX-License-Identifier: Apache-2.0
// The device_info entry, and the part of it the CUDA runtime cannot answer (the current PCIe
// link, read from sysfs).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "entries.hpp"
#include "xfer_cuda/context.hpp"

namespace xfer::cuda {

// ------------------------------------------------------------------------ PCIe link
int pcie_generation_from_speed(const std::string &speed_text) noexcept {
    // sysfs writes the per-lane transfer rate, e.g. "16.0 GT/s PCIe" (older kernels: "8 GT/s").
    const char *begin = speed_text.c_str();
    char *end = nullptr;
    const double gts = std::strtod(begin, &end);
    if (end == begin || !(gts > 0.0)) {
        return 0;
    }
    struct {
        double gts;
        int generation;
    } const table[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}, {128.0, 7}};
    for (const auto &row : table) {
        if (std::fabs(gts - row.gts) < 0.01) {
            return row.generation;
        }
    }
    return 0;
}

int pcie_width_from_text(const std::string &width_text) noexcept {
    const char *begin = width_text.c_str();
    char *end = nullptr;
    const long width = std::strtol(begin, &end, 10);
    if (end == begin || width <= 0 || width > 64) {
        return 0;
    }
    return static_cast<int>(width);
}

PcieLink read_pcie_link(const std::string &bus_id, const std::string &sysfs_root) noexcept {
    PcieLink link;
    try {
        // cudaDeviceGetPCIBusId writes hex digits in upper case; sysfs names are lower case.
        std::string id = bus_id;
        for (char &c : id) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        const std::string dir = sysfs_root + "/" + id + "/";
        std::string text;
        if (std::ifstream speed(dir + "current_link_speed"); speed && std::getline(speed, text)) {
            link.generation = pcie_generation_from_speed(text);
        }
        if (std::ifstream width(dir + "current_link_width"); width && std::getline(width, text)) {
            link.width = pcie_width_from_text(text);
        }
    } catch (...) {
        return PcieLink{}; // unknown is a valid answer; never fail device_info over it
    }
    return link;
}

// ---------------------------------------------------------------------- device info

xfer_status device_info(void *ctx, xfer_device_info *info) {
    return on_device("device_info", ctx, [&](const Context &c) {
        cudaDeviceProp prop{};
        if (auto st = check(cudaGetDeviceProperties(&prop, c.device), "cudaGetDeviceProperties(device %d)", c.device)) {
            return st;
        }
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        if (auto st = check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo(device %d)", c.device)) {
            return st;
        }
        char bus_id[32] = {0};
        if (auto st = check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, c.device), "cudaDeviceGetPCIBusId(device %d)",
                            c.device)) {
            return st;
        }
        int driver = 0;
        int runtime = 0;
        if (auto st = check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion")) {
            return st;
        }
        if (auto st = check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion")) {
            return st;
        }

        // Filled in a local and copied at the end: output arguments are written only on success.
        xfer_device_info out{};
        std::snprintf(out.name, sizeof out.name, "%s", prop.name);
        out.ordinal = c.device;
        out.kind = XFER_DEVICE_KIND_CUDA;
        out.total_memory = total_bytes;
        out.free_memory = free_bytes;
        out.compute_major = prop.major;
        out.compute_minor = prop.minor;
        out.multiprocessors = prop.multiProcessorCount;
        const PcieLink link = read_pcie_link(bus_id);
        out.pcie_generation = link.generation;
        out.pcie_width = link.width;
        std::snprintf(out.pci_bus_id, sizeof out.pci_bus_id, "%s", bus_id);
        for (char *p = out.pci_bus_id; *p != '\0'; ++p) {
            if (*p >= 'A' && *p <= 'F') {
                *p = static_cast<char>(*p - 'A' + 'a'); // the form lspci and sysfs use
            }
        }
        out.async_engine_count = prop.asyncEngineCount;
        out.concurrent_managed_access = prop.concurrentManagedAccess;
        out.can_map_host_memory = prop.canMapHostMemory;
        out.unified_addressing = prop.unifiedAddressing;
        out.driver_version = driver;
        out.runtime_version = runtime;
        *info = out;
        return XFER_SUCCESS;
    });
}

} // namespace xfer::cuda

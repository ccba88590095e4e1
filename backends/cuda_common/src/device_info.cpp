// SPDX-License-Identifier: Apache-2.0
#include <cstdio>

#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/errors.hpp"
#include "xfer_cuda/guard.hpp"
#include "xfer_cuda/pcie_link.hpp"

namespace xfer::cuda {

xfer_status device_info(void *ctx, xfer_device_info *info) {
    return on_device("device_info", ctx, [&](const Context &c) {
        cudaDeviceProp prop{};
        if (auto st = check(cudaGetDeviceProperties(&prop, c.device), "cudaGetDeviceProperties(device %d)",
                            c.device)) {
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
                *p = static_cast<char>(*p - 'A' + 'a');  // the form lspci and sysfs use
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

}  // namespace xfer::cuda

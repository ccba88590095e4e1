// SPDX-License-Identifier: Apache-2.0
// The current PCIe link of a device. The CUDA runtime has no call for it, so it is read from
// Linux sysfs (current_link_speed / current_link_width of the device's PCI function).
#pragma once

#include <string>

namespace xfer::cuda {

struct PcieLink {
    int generation = 0;  // 0 when unknown
    int width = 0;       // lanes, 0 when unknown
};

// "16.0 GT/s PCIe" -> 4; "2.5 GT/s" -> 1; unknown or malformed -> 0.
int pcie_generation_from_speed(const std::string &speed_text) noexcept;
// "16" -> 16; malformed -> 0.
int pcie_width_from_text(const std::string &width_text) noexcept;

// Reads /sys/bus/pci/devices/<bus_id lower-cased>/current_link_{speed,width}; zeros when the
// files cannot be read (containers, VMs, non-Linux).
PcieLink read_pcie_link(const std::string &bus_id, const std::string &sysfs_root = "/sys/bus/pci/devices") noexcept;

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/pcie_link.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace xfer::cuda {

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
        return PcieLink{};  // unknown is a valid answer; never fail device_info over it
    }
    return link;
}

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "run_info.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <sstream>

#include "xfer_handles.hpp"

#ifndef XFER_TOOL_GIT_COMMIT
#define XFER_TOOL_GIT_COMMIT "unknown"
#endif

namespace xfer::tool {
namespace {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

std::string host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "";
    return name;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        // x86: "model name"; some arm64 kernels only give "CPU part"; then it stays unknown.
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    }
    return "";
}

int current_numa_node() {
    unsigned cpu = 0, node = 0;
    if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return -1;
    return static_cast<int>(node);
}

// The tool's own run options, after the library's parameters.
void add_config(RunInfo &info, const RunOptions &o) {
    auto add = [&](const char *name, const std::string &value) {
        info.config.push_back({"xfer-tool", name, value, ""});
    };
    std::string list;
    for (const std::string &d : o.directions) list += (list.empty() ? "" : ",") + d;
    add("size", std::to_string(o.size));
    std::string sizes;
    for (std::uint64_t s : o.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
    add("sizes", sizes);
    add("direction", list);
    add("repeats", std::to_string(o.repeats) + (o.fixed_repeats ? "" : " (adaptive)"));
    add("warmup", std::to_string(o.warmup));
    add("batches", std::to_string(o.batches));
    add("streams", std::to_string(o.streams));
    add("copies", std::to_string(o.copies));
    add("copy-size", std::to_string(o.copy_size));
    add("stride", std::to_string(o.stride));
    add("quick", o.quick ? "true" : "false");
    add("config", o.config);
}

bool needs_quotes(const std::string &word) {
    if (word.empty()) return true;
    for (char c : word)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::string("-_=.,:/+@%").find(c) != std::string::npos))
            return true;
    return false;
}

} // namespace

const char *build_commit() { return XFER_TOOL_GIT_COMMIT; }

const char *param_source_name(xfer_param_source source) {
    switch (source) {
    case XFER_PARAM_FILE:
        return "file";
    case XFER_PARAM_ENV:
        return "environment";
    case XFER_PARAM_CALIBRATION:
        return "calibration";
    default:
        return "default";
    }
}

std::string cuda_version_text(int version) {
    if (version <= 0) return "";
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

int numa_node_of(const void *p) {
    if (!p) return -1;
    const long page = sysconf(_SC_PAGESIZE);
    void *pages[1] = {
        reinterpret_cast<void *>(reinterpret_cast<std::uintptr_t>(p) & ~static_cast<std::uintptr_t>(page - 1))};
    int status[1] = {-1};
    // nodes == NULL: move_pages only reports where each page is.
    if (syscall(SYS_move_pages, 0, 1UL, pages, nullptr, status, 0) != 0) return -1;
    return status[0] >= 0 ? status[0] : -1;
}

int pci_numa_node(const std::string &pci_bus_id) {
    if (pci_bus_id.empty()) return -1;
    std::string id = pci_bus_id;
    for (char &c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // CUDA prints an 8-digit domain ("00000000:1B:00.0"); sysfs has 4.
    if (id.size() > 12 && id.find(':') == 8) id = id.substr(4);
    std::ifstream in("/sys/bus/pci/devices/" + id + "/numa_node");
    int node = -1;
    if (!(in >> node)) return -1;
    return node;
}

std::string shell_command_line(const std::vector<std::string> &argv) {
    std::string out;
    for (const std::string &word : argv) {
        if (!out.empty()) out += ' ';
        if (!needs_quotes(word)) {
            out += word;
            continue;
        }
        out += '\'';
        for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

RunInfo collect_machine_info(const std::string &command_line, std::uint64_t seed) {
    RunInfo info;
    info.time = utc_now();
    info.host = host_name();
    info.command_line = command_line;
    info.commit = build_commit();
    info.cpu_model = cpu_model();
    info.cpu_numa_node = current_numa_node();
    info.seed = std::to_string(seed);
    // The library's parameters as xfer-tool list shows them.
    int count = 0;
    if (xfer_param_count(&count) == XFER_SUCCESS) {
        for (int i = 0; i < count; ++i) {
            xfer_param_info p{};
            if (xfer_param_get_info(i, &p) != XFER_SUCCESS) continue;
            info.config.push_back({p.section, p.name, p.value, param_source_name(p.source)});
        }
    }
    return info;
}

RunInfo collect_run_info(const RunOptions &o) {
    RunInfo info = collect_machine_info(o.command_line, o.seed);
    add_config(info, o);
    return info;
}

} // namespace xfer::tool

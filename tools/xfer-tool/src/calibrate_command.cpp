// SPDX-License-Identifier: Apache-2.0
// `xfer-tool calibrate [OPTIONS]`: measures this machine's copy costs on a GPU (xfer_calibrate),
// or shows the kept measurement that still holds, where it is kept, and the values the backend
// derives from it (xfer_context_get_setting).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "run_info.hpp"
#include "settings_table.hpp"
#include "short_options.hpp"
#include "text_table.hpp"
#include "units.hpp"
#include "xfer_handles.hpp"

namespace po = boost::program_options;
using nlohmann::json;

namespace xfer::tool {
namespace {

const char *const kHint = "Try 'xfer-tool calibrate --help'.";

struct CalibrateOptions {
    std::string backend; // "": pageable where available (it measures the staging engine too), else a CUDA backend
    int device = -1;
    bool force = false;
    std::string format = "table";
    std::string config;
};

po::options_description calibrate_description() {
    const CalibrateOptions defaults;
    po::options_description d("Options of 'calibrate'", 100, 50);
    d.add_options()(option_key("backend").c_str(), po::value<std::string>()->value_name("NAME"),
                    "the CUDA backend that measures (one calibration serves every backend of the GPU; pageable "
                    "also measures its staging engine). Default: pageable where available, else the first "
                    "available CUDA backend")(option_key("device").c_str(),
                                              po::value<int>()->default_value(defaults.device)->value_name("N"),
                                              "device index; -1 = XFER_DEVICE / the config file's device key / 0")(
        "force", po::bool_switch(), "measure even when the kept calibration still holds (the device should be idle)")(
        option_key("format").c_str(),
        po::value<std::string>()->default_value(defaults.format)->value_name("table|json"),
        "output format")("config", po::value<std::string>()->value_name("FILE"),
                         "configuration file, as the library reads it (sets XFER_CONFIG). Default: $XFER_CONFIG")(
        option_key("help").c_str(), "show this help");
    return d;
}

std::string calibrate_help() {
    std::ostringstream text;
    text << "Usage: xfer-tool calibrate [--backend NAME] [--device N] [--force] [OPTIONS]\n\n"
         << "Measures what copies of user (pageable) memory cost on this GPU: the DMA from page-locked memory,\n"
         << "the driver's pageable copy and the staging engine per size and direction, what page-locking a range\n"
         << "costs (cudaHostRegister, cudaHostUnregister), one thread's fill rate and what tracking a copy for\n"
         << "reuse costs; about a second. The result is kept per GPU (the `calibration` setting,\n"
         << "XFER_CALIBRATION: a folder, default $XDG_CACHE_HOME/xfer or ~/.cache/xfer; off = not kept) and\n"
         << "every later context of the GPU derives its copy choices from it. Without --force a kept\n"
         << "calibration that still holds (same GPU, driver, xfer version and CPU) is shown instead of measuring\n"
         << "again. A CUDA backend measures on its first open of a GPU anyway; this command shows what it\n"
         << "measured and forces a new measurement.\n\n"
         << calibrate_description() << "\n"
         << "Exit status: 0 done; 2 bad command line; 3 an error (no CUDA backend, a call failed).\n";
    return text.str();
}

bool parse(const std::vector<std::string> &args, CalibrateOptions &o) {
    const po::options_description d = calibrate_description();
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(d).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), kHint);
    }
    if (vm.count("help")) {
        std::fputs(calibrate_help().c_str(), stdout);
        return false;
    }
    if (vm.count("backend")) o.backend = vm["backend"].as<std::string>();
    o.device = vm["device"].as<int>();
    if (o.device < -1) throw UsageError("--device: " + std::to_string(o.device) + " is below the minimum -1", kHint);
    o.force = vm["force"].as<bool>();
    o.format = vm["format"].as<std::string>();
    if (o.format != "table" && o.format != "json")
        throw UsageError("--format: unknown format '" + o.format + "' (use table or json)", kHint);
    if (vm.count("config")) o.config = vm["config"].as<std::string>();
    return true;
}

// pageable where available (it measures the staging engine too), else the first available CUDA backend.
std::string choose_backend() {
    std::string first;
    for (const xfer_backend_info &b : xfer::backends()) {
        if (!b.available || b.device_kind != XFER_DEVICE_KIND_CUDA) continue;
        if (std::string(b.name) == "pageable") return b.name;
        if (first.empty()) first = b.name;
    }
    if (first.empty())
        throw XferError(XFER_ERROR_BACKEND_UNAVAILABLE,
                        "no CUDA backend is available: there is no GPU copy to calibrate (see 'xfer-tool list')");
    return first;
}

std::string gbps(const json &curve, std::size_t i) {
    const double bytes = curve.at(i).at(0).get<double>();
    const double seconds = curve.at(i).at(1).get<double>();
    return format_value(bytes / seconds / 1e9);
}

void print_table(const std::string &backend, int device, const Calibration &c, const json &cal,
                 const std::vector<Setting> &settings) {
    const json &k = cal.at("key");
    std::cout << "xfer-tool calibrate: backend " << backend << ", device " << device << " (" << k.value("gpu_uuid", "")
              << ")\n";
    if (c.measured)
        std::cout << "measured now in " << format_value(c.seconds) << " s\n";
    else
        std::cout << "a kept calibration still holds (measured " << cal.value("measured_at", "?") << " in "
                  << format_value(c.seconds) << " s; --force measures again)\n";
    std::cout << "kept in " << (c.file.empty() ? std::string("(not kept: calibration = off)") : c.file) << "\n";
    std::cout << "key: driver " << k.value("driver_version", 0) << ", runtime " << k.value("runtime_version", 0)
              << ", xfer " << k.value("xfer_version", "") << ", CPU " << k.value("cpu_model", "") << " ("
              << k.value("cpus", 0) << " hardware threads)\n\n";

    const json &copies = cal.at("copies");
    std::cout << "Copies, GB/s (10^9 bytes/s; medians, timed from the call to the stream's completion):\n";
    std::vector<TextTable::Column> columns = {{"size", TextTable::Align::right}};
    std::vector<std::pair<const json *, std::string>> curves;
    for (const char *way : {"dma", "driver", "staged"}) {
        if (!copies.contains(way)) continue;
        for (const char *dir : {"to_device", "to_host"}) {
            columns.push_back(
                {std::string(way) + (std::string(dir) == "to_device" ? " h2d" : " d2h"), TextTable::Align::right});
            curves.emplace_back(&copies.at(way).at(dir), "");
        }
    }
    TextTable table(columns);
    const json &sizes = copies.at("dma").at("to_device");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        std::vector<std::string> row = {format_size(sizes.at(i).at(0).get<std::uint64_t>())};
        for (const auto &[curve, unused] : curves) row.push_back(i < curve->size() ? gbps(*curve, i) : "-");
        table.add_row(row);
    }
    table.print(std::cout, "   ");
    const auto cost = [&](const char *what) {
        const json &r = cal.at(what);
        return format_value(r.at("call_seconds").get<double>() * 1e3) + " ms + " +
               format_value(r.at("byte_seconds").get<double>() * double(1ull << 30) * 1e3) + " ms/GiB";
    };
    std::cout << "Page-locking a range: cudaHostRegister " << cost("register") << ", cudaHostUnregister "
              << cost("unregister") << "\n";
    std::cout << "One thread's fill of page-locked memory: "
              << format_value(cal.at("fill_bytes_per_second").get<double>() / 1e9) << " GB/s\n";
    std::cout << "Tracking a copy for reuse (its first page's frame from /proc/self/pagemap): "
              << format_value(cal.at("track_seconds").get<double>() * 1e6) << " us\n\n";
    std::cout << "Values backend " << backend << " uses on device " << device
              << " (source: calibration = measured here, default, file, environment):\n";
    print_settings_table(std::cout, settings, "   ");
}

json settings_json(const std::vector<Setting> &settings) {
    json out = json::array();
    for (const Setting &s : settings)
        out.push_back({{"name", s.name},
                       {"value", s.value},
                       {"source", param_source_name(s.source)},
                       {"default", s.default_value},
                       {"derived", s.derived}});
    return out;
}

} // namespace

int run_calibrate_command(const std::vector<std::string> &args) {
    CalibrateOptions o;
    if (!parse(args, o)) return kExitOk;
    use_config_file(o.config);
    try {
        const std::string backend = o.backend.empty() ? choose_backend() : o.backend;
        Context ctx(backend, o.device);
        const Calibration c = ctx.calibrate(o.force);
        const json cal = json::parse(c.json);
        const std::vector<Setting> settings = ctx.settings();
        const int device = ctx.device();
        if (o.format == "json") {
            std::cout << json{{"backend", backend},
                              {"device", device},
                              {"measured", c.measured},
                              {"seconds", c.seconds},
                              {"file", c.file},
                              {"calibration", cal},
                              {"settings", settings_json(settings)}}
                             .dump(2)
                      << "\n";
        } else {
            print_table(backend, device, c, cal, settings);
        }
        std::cout.flush();
        return kExitOk;
    } catch (const XferError &e) {
        std::cout.flush();
        std::fprintf(stderr, "xfer-tool: calibrate: %s\n", e.what());
        return kExitError;
    } catch (const json::exception &e) {
        std::fprintf(stderr, "xfer-tool: calibrate: the library's calibration is not the JSON expected: %s\n",
                     e.what());
        return kExitError;
    }
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
#include "calibration_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <xfer/xfer_backend.h>

namespace xfer::cuda::user_memory {
namespace {

using nlohmann::json;

constexpr int kFormat = 2;

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                std::string v = line.substr(colon + 1);
                const auto first = v.find_first_not_of(" \t");
                return first == std::string::npos ? std::string() : v.substr(first);
            }
        }
    }
    return "unknown";
}

// mkdir -p of `dir`; false with *why naming the folder that could not be made.
bool make_folders(const std::string &dir, std::string *why) {
    std::string path;
    std::stringstream parts(dir);
    std::string part;
    if (!dir.empty() && dir[0] == '/') path = "/";
    while (std::getline(parts, part, '/')) {
        if (part.empty()) continue;
        path += part + "/";
        if (::mkdir(path.c_str(), 0755) != 0) {
            struct stat st {};
            if (errno != EEXIST || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
                *why = "cannot make folder " + path + ": " +
                       (errno == EEXIST ? "a file of that name exists" : std::strerror(errno));
                return false;
            }
        }
    }
    return true;
}

json curve_json(const Curve &c) {
    json points = json::array();
    for (const Curve::Point &p : c.points()) points.push_back({p.bytes, p.seconds});
    return points;
}

Curve curve_from(const json &j) {
    Curve c;
    for (const json &p : j) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_number_unsigned() || !p[1].is_number() ||
            p[1].get<double>() <= 0)
            throw std::invalid_argument("a curve point is not [bytes, seconds > 0]");
        c.add(p[0].get<std::uint64_t>(), p[1].get<double>());
    }
    return c;
}

const char *const kDirections[] = {"to_device", "to_host"};

} // namespace

std::string CalibrationKey::difference(const CalibrationKey &now) const {
    std::string out;
    const auto note = [&](const char *what, const std::string &was, const std::string &is) {
        if (was != is) out += (out.empty() ? "" : ", ") + std::string(what) + " " + was + " -> " + is;
    };
    note("GPU", gpu_uuid, now.gpu_uuid);
    note("driver", std::to_string(driver_version), std::to_string(now.driver_version));
    note("runtime", std::to_string(runtime_version), std::to_string(now.runtime_version));
    note("xfer", xfer_version, now.xfer_version);
    note("CPU", cpu_model, now.cpu_model);
    note("CPUs", std::to_string(cpus), std::to_string(now.cpus));
    return out;
}

CalibrationKey host_key(std::string gpu_uuid, int driver_version, int runtime_version) {
    CalibrationKey k;
    k.gpu_uuid = std::move(gpu_uuid);
    k.driver_version = driver_version;
    k.runtime_version = runtime_version;
    k.xfer_version = std::to_string(XFER_VERSION_MAJOR) + "." + std::to_string(XFER_VERSION_MINOR) + "." +
                     std::to_string(XFER_VERSION_PATCH) + " (plugin ABI " + std::to_string(XFER_BACKEND_ABI_MAJOR) +
                     "." + std::to_string(XFER_BACKEND_ABI_MINOR) + ")";
    k.cpu_model = cpu_model();
    k.cpus = static_cast<int>(std::thread::hardware_concurrency());
    return k;
}

std::optional<std::string> calibration_path(const std::string &setting, const CalibrationKey &key, std::string *why) {
    if (setting == "off") {
        *why = "calibration = off (XFER_CALIBRATION)";
        return std::nullopt;
    }
    std::string dir = setting;
    if (dir.empty()) {
        // secure_getenv: a set-user-ID program never writes where its caller's environment says.
        if (const char *cache = secure_getenv("XDG_CACHE_HOME"); cache != nullptr && cache[0] == '/') {
            dir = std::string(cache) + "/xfer";
        } else if (const char *home = secure_getenv("HOME"); home != nullptr && home[0] == '/') {
            dir = std::string(home) + "/.cache/xfer";
        } else {
            *why = "no folder to keep it in (neither XDG_CACHE_HOME nor HOME is an absolute path; set "
                   "XFER_CALIBRATION to a folder)";
            return std::nullopt;
        }
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir + "/calibration-" + key.gpu_uuid + ".json";
}

std::string to_json(const Calibration &c) {
    json copies = json::object();
    for (int w = 0; w < kWays; ++w) {
        if (Way(w) == Way::staged && !c.staged) continue;
        json per = json::object();
        for (int d = 0; d < 2; ++d) per[kDirections[d]] = curve_json(c.model.curves[w][d]);
        copies[way_name(Way(w))] = per;
    }
    const json j = {
        {"format", kFormat},
        {"key",
         {{"gpu_uuid", c.key.gpu_uuid},
          {"driver_version", c.key.driver_version},
          {"runtime_version", c.key.runtime_version},
          {"xfer_version", c.key.xfer_version},
          {"cpu_model", c.key.cpu_model},
          {"cpus", c.key.cpus}}},
        {"measured_at", c.measured_at},
        {"seconds", c.seconds},
        {"units", "bytes, seconds; curves are [bytes, seconds] medians of host-timed copies (call to completion)"},
        {"copies", copies},
        {"register",
         {{"call_seconds", c.model.register_cost.call_seconds}, {"byte_seconds", c.model.register_cost.byte_seconds}}},
        {"unregister",
         {{"call_seconds", c.model.unregister_cost.call_seconds},
          {"byte_seconds", c.model.unregister_cost.byte_seconds}}},
        {"fill_bytes_per_second", c.model.fill_bytes_per_second},
        {"track_seconds", c.model.track_seconds},
    };
    return j.dump(1);
}

std::optional<Calibration> from_json(const std::string &text, std::string *why) {
    try {
        const json j = json::parse(text);
        if (j.value("format", 0) != kFormat) {
            *why = "format " + std::to_string(j.value("format", 0)) + ", not " + std::to_string(kFormat);
            return std::nullopt;
        }
        Calibration c;
        const json &k = j.at("key");
        c.key.gpu_uuid = k.at("gpu_uuid").get<std::string>();
        c.key.driver_version = k.at("driver_version").get<int>();
        c.key.runtime_version = k.at("runtime_version").get<int>();
        c.key.xfer_version = k.at("xfer_version").get<std::string>();
        c.key.cpu_model = k.at("cpu_model").get<std::string>();
        c.key.cpus = k.at("cpus").get<int>();
        c.measured_at = j.value("measured_at", "");
        c.seconds = j.value("seconds", 0.0);
        const json &copies = j.at("copies");
        for (int w = 0; w < kWays; ++w) {
            if (!copies.contains(way_name(Way(w)))) continue;
            if (Way(w) == Way::staged) c.staged = true;
            for (int d = 0; d < 2; ++d)
                c.model.curves[w][d] = curve_from(copies.at(way_name(Way(w))).at(kDirections[d]));
        }
        c.model.register_cost = {j.at("register").at("call_seconds").get<double>(),
                                 j.at("register").at("byte_seconds").get<double>()};
        c.model.unregister_cost = {j.at("unregister").at("call_seconds").get<double>(),
                                   j.at("unregister").at("byte_seconds").get<double>()};
        c.model.fill_bytes_per_second = j.at("fill_bytes_per_second").get<double>();
        c.model.track_seconds = j.at("track_seconds").get<double>();
        if (!c.model.complete(c.staged)) {
            *why = "incomplete (a curve, the registration cost, the fill rate or the tracking cost is missing)";
            return std::nullopt;
        }
        return c;
    } catch (const std::exception &e) {
        *why = std::string("not a calibration: ") + e.what();
        return std::nullopt;
    }
}

std::optional<Calibration> load_calibration(const std::string &path, const CalibrationKey &key, std::string *why) {
    std::ifstream in(path);
    if (!in) {
        *why = path + ": none kept yet";
        return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    std::string problem;
    std::optional<Calibration> c = from_json(text.str(), &problem);
    if (!c) {
        *why = path + ": " + problem;
        return std::nullopt;
    }
    if (const std::string changed = c->key.difference(key); !changed.empty()) {
        *why = path + ": stale (" + changed + ")";
        return std::nullopt;
    }
    return c;
}

bool save_calibration(const std::string &path, const Calibration &c, std::string *why) {
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0 && !make_folders(path.substr(0, slash), why)) return false;
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << to_json(c) << '\n';
        out.close();
        if (!out) {
            *why = "cannot write " + tmp + ": " + std::strerror(errno);
            std::remove(tmp.c_str());
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        *why = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace xfer::cuda::user_memory

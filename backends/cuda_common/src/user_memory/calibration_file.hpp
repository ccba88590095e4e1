// SPDX-License-Identifier: Apache-2.0
// Where a calibration is kept and when it still holds. One JSON file per GPU, named by the GPU's
// UUID, in the user's cache folder ($XDG_CACHE_HOME/xfer, else $HOME/.cache/xfer) or in the
// folder the `calibration` setting (XFER_CALIBRATION) names; "off" keeps none and measures
// nothing on its own. A file holds only while everything its figures depend on is unchanged:
// the GPU, the driver and runtime versions, xfer's version, and the host's CPU and core count;
// any change makes it stale, and the next context measures again. Written to a temporary file
// and renamed into place, so a process never reads half of another's. No CUDA here.
#pragma once

#include <optional>
#include <string>

#include "cost_model.hpp"

namespace xfer::cuda::user_memory {

// What a calibration's figures depend on.
struct CalibrationKey {
    std::string gpu_uuid;    // "GPU-3dfaab4e-..."
    int driver_version = 0;  // cudaDriverGetVersion
    int runtime_version = 0; // cudaRuntimeGetVersion
    std::string xfer_version;
    std::string cpu_model; // /proc/cpuinfo's "model name"
    int cpus = 0;          // hardware threads
    // "" when equal; else what differs, e.g. "driver 13000 -> 13010".
    std::string difference(const CalibrationKey &now) const;
};

// The key of this host with the GPU's part filled in by the caller (xfer's version, CPU model
// and count read here).
CalibrationKey host_key(std::string gpu_uuid, int driver_version, int runtime_version);

struct Calibration {
    CalibrationKey key;
    CostModel model;
    bool staged = false;     // the staging curves were measured (by the pageable backend)
    std::string measured_at; // UTC, ISO 8601
    double seconds = 0.0;    // how long measuring took
};

// The file for `key` under `setting` (the calibration setting's text: "" = the user's cache
// folder, "off" = none, anything else = that folder). nullopt: off, or no folder can be named
// (no HOME); *why says which.
std::optional<std::string> calibration_path(const std::string &setting, const CalibrationKey &key, std::string *why);

std::string to_json(const Calibration &c);
// nullopt, *why naming the problem, for text that is not a calibration of this format.
std::optional<Calibration> from_json(const std::string &text, std::string *why);

// The calibration kept at `path` if it holds for `key`; nullopt with *why (missing, unreadable,
// corrupt, stale: what changed) otherwise.
std::optional<Calibration> load_calibration(const std::string &path, const CalibrationKey &key, std::string *why);
// Writes `c` to `path` (its folder made if missing) through a temporary file renamed into
// place. False with *why on failure (nothing half-written is left).
bool save_calibration(const std::string &path, const Calibration &c, std::string *why);

} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
// Finding, loading and probing backend plugins.
//
// Plugins are loaded once per process (cached by canonical path) and never unloaded: CUDA
// runtimes and backend worker threads make unloading unsafe. A plugin that cannot be used
// is still listed, with the reason, so `xfer-tool list` can explain it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <xfer/xfer_backend.h>

namespace xfer::core {

// One plugin file. Lives until the process exits, so pointers into it stay valid.
struct Plugin {
    std::string name; // <name> of libxfer-backend-<name>.so
    std::string path; // the file as found on the search path
    // XFER_SUCCESS when `table` is usable; else why not (BACKEND_UNAVAILABLE: it did not load
    // or has no entry point; BACKEND_ABI: it breaks the plugin ABI) with `load_error`.
    xfer_status load_status = XFER_ERROR_BACKEND_UNAVAILABLE;
    std::string load_error;
    unsigned abi_major = 0; // as the plugin's table says (0 if it gave none)
    unsigned abi_minor = 0;
    xfer_backend_table table{};        // the plugin's table; entries past its struct_size are NULL
    std::uint64_t fork_generation = 0; // fork_generation() when it was loaded

    bool loaded() const { return load_status == XFER_SUCCESS; }
    const char *description() const { return loaded() && table.description != nullptr ? table.description : ""; }
};

// A plugin as seen by one enumeration: loaded or not, and what its probe said.
struct FoundBackend {
    const Plugin *plugin = nullptr;
    bool available = false;
    xfer_status status = XFER_SUCCESS; // why unavailable: the load status or the probe's status
    const char *reason = "";           // lives as long as the process
    int device_count = 0;
    // A file with a built-in backend's name found outside the default folder: listed
    // (unavailable, saying so) but never opened; find() skips it.
    bool replaced = false;
};

struct SearchedDir {
    std::string path;
    bool exists = false;
};

struct Discovery {
    std::vector<SearchedDir> dirs;      // in search order
    std::vector<FoundBackend> backends; // in search order; first file of a name wins
    // Backends whose files were found but not opened: another one was asked for by name.
    std::vector<std::string> not_opened;

    const FoundBackend *find(const std::string &name) const;
    bool found_unopened(const std::string &name) const;
    // "a, b, c": every backend name found, opened or not.
    std::string names() const;
    // "/a (missing), /b" for messages.
    std::string describe_dirs() const;
};

// lib/xfer next to libxfer.so (wherever the core itself was loaded from).
std::string default_plugin_dir();

// Splits a colon-separated list; empty and relative entries are dropped so that the current
// working directory can never be searched (a planted plugin there would run in-process).
std::vector<std::string> split_search_path(const std::string &list);

// Lists the plugins in `dirs`, loads new ones and probes every loaded one (probe is cheap
// and its answer can change: a GPU may be taken away or a MIG slice reconfigured).
// With `only` set, the other plugins' files are listed in not_opened and never opened: opening
// runs a library's constructors, and a program that asked for one backend must not run the
// code of every file that happens to lie on the search path.
// A file found outside `builtin_dir` (lib/xfer next to libxfer.so) whose name a file there
// also has is not used: the built-in backend is, unless XFER_PLUGIN_OVERRIDE=1 (ignored in
// set-user-ID programs). Replacing the GPU-less host backend, or a CUDA backend, by a file
// that happens to lie earlier on XFER_PLUGIN_PATH must be asked for.
Discovery discover_backends(const std::vector<std::string> &dirs, const std::string &only = std::string(),
                            const std::string &builtin_dir = std::string());

// fork() handlers (fork_support.cpp): hold the registry's locks across fork().
void plugin_registry_lock_for_fork();
void plugin_registry_unlock_in_parent();
void plugin_registry_reset_in_child();

// For a backend whose device count is a parameter (table entry probe_params, plugin ABI 1.2):
// probes again with its effective parameters; the answer replaces probe's. Leaves a backend
// that probe already found unavailable as it is.
void probe_with_params(FoundBackend &found, const std::vector<std::pair<std::string, std::string>> &params);

// Keeps `text` for the life of the process and returns a stable pointer to it.
const char *intern(const std::string &text);

} // namespace xfer::core

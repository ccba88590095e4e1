// SPDX-License-Identifier: Apache-2.0
#include "plugin_registry.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <unordered_set>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "calibration_scope.hpp"
#include "copy_paths.hpp"
#include "error.hpp"
#include "fork_generation.hpp"
#include "last_error.hpp"
#include "plugin_check.hpp"
#include "xfer_config/value_parse.hpp"

namespace xfer::core {
namespace {

namespace fs = std::filesystem;

const xfer_core_services kServices = {
    sizeof(xfer_core_services), XFER_BACKEND_ABI_MAJOR,       XFER_BACKEND_ABI_MINOR,  &plugin_set_error,
    &CopyCall::take_path,       &CopyCall::note_registration, &CopyCall::path_refused, &calibration_setting_service,
};

// A plugin record together with the library that must stay loaded for its table to be valid.
struct LoadedFile {
    Plugin plugin;
    boost::dll::shared_library library;
};

// Cache of every plugin file ever looked at, by canonical path and name. Deliberately leaked:
// destroying it at exit would dlclose plugins whose threads or CUDA state may still be live.
struct Cache {
    std::mutex mutex;
    std::map<std::pair<std::string, std::string>, std::unique_ptr<LoadedFile>> files;
    // Files refused without being opened (unsafe permissions or links), by path and reason.
    std::map<std::pair<std::string, std::string>, std::unique_ptr<Plugin>> refused;
};
Cache &cache() {
    static Cache *instance = new Cache;
    return *instance;
}

// Strings handed out by intern(); leaked: process lifetime.
struct Interned {
    std::mutex mutex;
    std::set<std::string> strings;
};
Interned &interned() {
    static Interned *instance = new Interned;
    return *instance;
}

// Where this code was loaded from; a static function's address lies in libxfer.so itself.
void locate_me() {}

struct RequiredEntry {
    const char *name;
    bool (*missing)(const xfer_backend_table &);
};
#define XFER_REQUIRED(entry)                                                                                           \
    {                                                                                                                  \
#entry, [](const xfer_backend_table &t) { return t.entry == nullptr; }                                         \
    }
const RequiredEntry kRequired[] = {
    XFER_REQUIRED(probe),          XFER_REQUIRED(context_create),     XFER_REQUIRED(context_destroy),
    XFER_REQUIRED(buffer_alloc),   XFER_REQUIRED(buffer_free),        XFER_REQUIRED(stream_create),
    XFER_REQUIRED(stream_destroy), XFER_REQUIRED(stream_synchronize),
};
#undef XFER_REQUIRED

void refuse(Plugin &p, xfer_status status, std::string why) {
    p.load_status = status;
    p.load_error = std::move(why);
}

// Checks what the plugin declares about its parameters: the core maps them to config keys
// and environment variables, so a bad declaration would surface as a confusing config error.
bool params_valid(Plugin &p) {
    const xfer_backend_table &t = p.table;
    if (t.param_count > 0 && t.params == nullptr) {
        refuse(p, XFER_ERROR_BACKEND_ABI,
               msg("plugin ", p.path, " declares ", t.param_count, " parameters but params is NULL"));
        return false;
    }
    for (std::size_t i = 0; i < t.param_count; ++i) {
        const xfer_backend_param &param = t.params[i];
        if (param.name == nullptr || param.type == nullptr || param.default_value == nullptr) {
            refuse(p, XFER_ERROR_BACKEND_ABI,
                   msg("plugin ", p.path, " declares parameter ", i, " with a NULL name, type or default"));
            return false;
        }
        std::string why;
        if (!is_known_param_type(param.type) || !normalize_value(param.type, param.default_value, &why)) {
            if (why.empty()) why = "unknown type";
            refuse(p, XFER_ERROR_BACKEND_ABI,
                   msg("plugin ", p.path, " declares parameter '", param.name, "' of type '", param.type,
                       "' with default '", param.default_value, "': ", why));
            return false;
        }
    }
    return true;
}

// Fills p from the plugin's table; on any breach of the ABI the plugin is refused.
void adopt_table(Plugin &p, const xfer_backend_table *t) {
    p.abi_major = t->abi_major;
    p.abi_minor = t->abi_minor;
    if (t->abi_major != XFER_BACKEND_ABI_MAJOR) {
        refuse(p, XFER_ERROR_BACKEND_ABI,
               msg("plugin ", p.path, " was built for plugin ABI ", t->abi_major, ".", t->abi_minor,
                   " but this xfer core implements plugin ABI ", XFER_BACKEND_ABI_MAJOR, ".", XFER_BACKEND_ABI_MINOR,
                   " (major versions must match)"));
        return;
    }
    if (t->struct_size < XFER_BACKEND_TABLE_V1_SIZE) {
        refuse(p, XFER_ERROR_BACKEND_ABI,
               msg("plugin ", p.path, " (plugin ABI ", t->abi_major, ".", t->abi_minor, ") has a function table of ",
                   t->struct_size, " bytes, smaller than the ", XFER_BACKEND_TABLE_V1_SIZE, " bytes every plugin ABI ",
                   XFER_BACKEND_ABI_MAJOR, ".x table has (this core implements ", XFER_BACKEND_ABI_MAJOR, ".",
                   XFER_BACKEND_ABI_MINOR, ")"));
        return;
    }
    // A plugin built against an older minor version has a shorter table: the entries it
    // does not have stay NULL (not supported). A newer plugin's extra entries are ignored.
    std::memcpy(&p.table, t, std::min(t->struct_size, sizeof(xfer_backend_table)));
    p.table.struct_size = sizeof(xfer_backend_table);
    for (const RequiredEntry &entry : kRequired) {
        if (entry.missing(p.table)) {
            refuse(p, XFER_ERROR_BACKEND_ABI,
                   msg("plugin ", p.path, " leaves the required entry '", entry.name, "' NULL"));
            return;
        }
    }
    if (p.table.name == nullptr || p.name != p.table.name) {
        refuse(p, XFER_ERROR_BACKEND_ABI,
               msg("plugin ", p.path, " calls itself '", p.table.name != nullptr ? p.table.name : "(NULL)",
                   "' but its file name says '", p.name, "'"));
        return;
    }
    if (!params_valid(p)) return;
    p.load_status = XFER_SUCCESS;
}

void load(LoadedFile &file) {
    Plugin &p = file.plugin;
    // First in a throw-away process: a plugin whose code aborts, crashes or exits while it is
    // opened must not take the application with it (plugin_check.hpp).
    if (std::string why = check_plugin_in_child(p.path, default_plugin_dir()); !why.empty()) {
        refuse(p, XFER_ERROR_BACKEND_UNAVAILABLE, std::move(why));
        return;
    }
    std::error_code ec;
    // RTLD_NOW: a plugin with an unresolved symbol is refused here, with the loader's message,
    // instead of passing discovery and ending the process (exit 127) at its first call.
    file.library.load(p.path, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    if (ec) {
        // Boost.DLL keeps only a generic error code; dlerror() still holds the loader's own
        // text ("libcudart.so.13: cannot open shared object file"), which is what users need.
        const char *detail = dlerror();
        refuse(p, XFER_ERROR_BACKEND_UNAVAILABLE,
               msg("cannot load plugin ", p.path, ": ", detail != nullptr ? detail : ec.message()));
        return;
    }
    if (!file.library.has(XFER_BACKEND_ENTRY_SYMBOL)) {
        refuse(p, XFER_ERROR_BACKEND_UNAVAILABLE,
               msg("plugin ", p.path, " does not export the entry point '", XFER_BACKEND_ENTRY_SYMBOL, "'"));
        return;
    }
    auto &entry = file.library.get<const xfer_backend_table *(const xfer_core_services *)>(XFER_BACKEND_ENTRY_SYMBOL);
    ErrorCapture capture;
    const xfer_backend_table *table = entry(&kServices);
    if (table == nullptr) {
        std::string said = capture.captured();
        refuse(p, XFER_ERROR_BACKEND_UNAVAILABLE,
               msg("plugin ", p.path, ": ", XFER_BACKEND_ENTRY_SYMBOL, " returned no table",
                   said.empty() ? std::string() : ": " + said));
        return;
    }
    adopt_table(p, table);
}

const Plugin &load_cached(const std::string &name, const std::string &path) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    std::string key = ec ? path : canonical.string();
    Cache &c = cache();
    // Loading under the lock: dlopen serialises anyway, and every plugin's entry point then
    // runs exactly once per process.
    std::lock_guard<std::mutex> lock(c.mutex);
    auto &slot = c.files[{key, name}];
    if (!slot) {
        auto file = std::make_unique<LoadedFile>();
        file->plugin.name = name;
        file->plugin.path = path;
        file->plugin.fork_generation = fork_generation();
        load(*file);
        slot = std::move(file);
    }
    return slot->plugin;
}

const Plugin &refused_cached(const std::string &name, const std::string &path, const std::string &why) {
    Cache &c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto &slot = c.refused[{path, why}];
    if (!slot) {
        slot = std::make_unique<Plugin>();
        slot->name = name;
        slot->path = path;
        slot->load_status = XFER_ERROR_BACKEND_UNAVAILABLE;
        slot->load_error = why;
    }
    return *slot;
}

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// Who, besides this process's user and root, could replace what `st` describes: "" if
// nobody, else a phrase for the message. `sticky_ok`: a folder with the sticky bit (as /tmp) may
// be writable by others, since they cannot rename or remove what they do not own there.
std::string others_can_replace(const struct stat &st, bool sticky_ok) {
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        return msg("is owned by another user (uid ", st.st_uid, ")");
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(sticky_ok && (st.st_mode & S_ISVTX) != 0)) {
        return msg("is writable by ", (st.st_mode & S_IWOTH) != 0 ? "others" : "its group", " (mode ",
                   mode_text(st.st_mode), ")");
    }
    return std::string();
}

// Why a plugin file must not be opened, or "" when it may: code that another user can
// replace must not run in this process. Another user can replace the file when they own it or
// can write it, or own or can write its folder or any folder above it (renaming a folder
// swaps everything below it). XFER_PLUGIN_ALLOW_UNSAFE=1 (ignored in set-user-ID programs)
// lets it through, for shared development trees.
std::string unsafe_reason(const fs::path &dir, const fs::path &file) {
    const char *allow = secure_getenv("XFER_PLUGIN_ALLOW_UNSAFE");
    if (allow != nullptr && std::strcmp(allow, "1") == 0) return std::string();
    const std::string advice = "; not loaded (XFER_PLUGIN_ALLOW_UNSAFE=1 allows it)";
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
        if (std::string who = others_can_replace(st, false); !who.empty()) {
            return msg("plugin ", file.string(), ": its folder ", dir.string(), " ", who, advice);
        }
    }
    std::error_code ec;
    const fs::path home = fs::canonical(dir, ec);
    if (!ec) {
        for (fs::path above = home.parent_path(); !above.empty(); above = above.parent_path()) {
            if (::stat(above.c_str(), &st) == 0) {
                if (std::string who = others_can_replace(st, true); !who.empty()) {
                    return msg("plugin ", file.string(), ": the folder ", above.string(), " above it ", who, advice);
                }
            }
            if (above == above.root_path()) break;
        }
    }
    if (::lstat(file.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        const fs::path target = fs::canonical(file, ec);
        if (ec || target.parent_path() != home) {
            return msg("plugin ", file.string(), " is a symbolic link to ",
                       ec ? std::string("(unresolvable)") : target.string(), ", outside the search folder ",
                       dir.string(), advice);
        }
    }
    if (::stat(file.c_str(), &st) == 0) {
        if (std::string who = others_can_replace(st, false); !who.empty()) {
            return msg("plugin ", file.string(), " ", who, advice);
        }
    }
    return std::string();
}

void probe(FoundBackend &found) {
    const Plugin &p = *found.plugin;
    if (!p.loaded()) {
        found.status = p.load_status;
        found.reason = intern(p.load_error);
        return;
    }
    if (p.table.device_kind == XFER_DEVICE_KIND_CUDA && p.fork_generation != fork_generation()) {
        // The CUDA runtime does not survive fork(): probing it here could hang.
        found.status = XFER_ERROR_BACKEND_UNAVAILABLE;
        found.reason = intern(msg("backend '", p.name,
                                  "' was loaded before this process was forked; CUDA cannot be used "
                                  "in a child created by fork() (exec a new program, or use posix_spawn)"));
        return;
    }
    int count = 0;
    ErrorCapture capture;
    xfer_status st = p.table.probe(&count);
    if (st == XFER_SUCCESS && count >= 1) {
        found.available = true;
        found.device_count = count;
        return;
    }
    std::string said = capture.captured();
    if (st == XFER_SUCCESS) {
        found.status = XFER_ERROR_NO_DEVICE;
        found.reason = intern(msg("backend '", p.name, "' probe reported ", count, " devices"));
    } else {
        found.status = st == XFER_ERROR_NO_DEVICE ? XFER_ERROR_NO_DEVICE : XFER_ERROR_BACKEND_UNAVAILABLE;
        found.reason = intern(said.empty() ? msg("backend '", p.name, "' probe failed with ", xfer_status_string(st),
                                                 " and gave no reason")
                                           : said);
    }
}

// Plugin file names in `dir`, sorted so the search order does not depend on the file system.
std::vector<std::string> plugin_files(const fs::path &dir) {
    std::vector<std::string> names;
    std::error_code ec;
    const std::string prefix = XFER_BACKEND_FILE_PREFIX;
    const std::string suffix = XFER_BACKEND_FILE_SUFFIX;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string file = it->path().filename().string();
        if (file.size() <= prefix.size() + suffix.size()) continue;
        if (file.compare(0, prefix.size(), prefix) != 0) continue;
        if (file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
        std::error_code type_ec;
        if (!fs::is_regular_file(it->path(), type_ec)) continue; // follows symlinks
        names.push_back(file);
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

const FoundBackend *Discovery::find(const std::string &name) const {
    for (const FoundBackend &b : backends) {
        if (b.plugin->name == name && !b.replaced) return &b;
    }
    return nullptr;
}

bool Discovery::found_unopened(const std::string &name) const {
    return std::find(not_opened.begin(), not_opened.end(), name) != not_opened.end();
}

std::string Discovery::names() const {
    std::string out;
    for (const FoundBackend &b : backends) {
        if (!b.replaced) out += (out.empty() ? "" : ", ") + b.plugin->name;
    }
    for (const std::string &name : not_opened) out += (out.empty() ? "" : ", ") + name;
    return out;
}

std::string Discovery::describe_dirs() const {
    std::string out;
    for (const SearchedDir &d : dirs) {
        if (!out.empty()) out += ", ";
        out += d.path;
        if (!d.exists) out += " (missing)";
    }
    return out.empty() ? "(no folders)" : out;
}

namespace {
std::string locate_default_plugin_dir() {
    std::error_code ec;
    fs::path me = boost::dll::symbol_location_ptr(reinterpret_cast<void *>(&locate_me), ec);
    if (ec) return std::string();
    // The loader reports the path it opened, e.g. "bin/../lib/libxfer.so" via a RUNPATH;
    // users should see the folder itself.
    // Made absolute against the directory current now: when libxfer.so was found through a
    // relative path (LD_LIBRARY_PATH=lib), a later chdir() must not move the folder searched.
    fs::path dir = fs::absolute(me.parent_path() / "xfer", ec);
    if (ec) return std::string();
    fs::path clean = fs::weakly_canonical(dir, ec);
    return (ec ? dir.lexically_normal() : clean).string();
}

// Resolved when libxfer.so is loaded -- before the program can chdir() -- and never again.
const std::string &resolved_default_plugin_dir() {
    static const std::string *dir = new std::string(locate_default_plugin_dir());
    return *dir;
}
const bool kResolvedAtLoad = !resolved_default_plugin_dir().empty();
} // namespace

std::string default_plugin_dir() {
    (void)kResolvedAtLoad;
    return resolved_default_plugin_dir();
}

std::vector<std::string> split_search_path(const std::string &list) {
    std::vector<std::string> dirs;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t colon = list.find(':', start);
        if (colon == std::string::npos) colon = list.size();
        std::string dir = list.substr(start, colon - start);
        if (!dir.empty() && fs::path(dir).is_absolute()) dirs.push_back(dir);
        start = colon + 1;
    }
    return dirs;
}

namespace {
bool same_folder(const std::string &a, const std::string &b) {
    std::error_code ec;
    return !a.empty() && !b.empty() && fs::equivalent(a, b, ec);
}
} // namespace

Discovery discover_backends(const std::vector<std::string> &dirs, const std::string &only,
                            const std::string &builtin_dir) {
    Discovery d;
    std::unordered_set<std::string> seen;
    const std::string prefix = XFER_BACKEND_FILE_PREFIX;
    const std::string suffix = XFER_BACKEND_FILE_SUFFIX;
    const auto name_of = [&](const std::string &file) {
        return file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    };
    // Each folder listed once, in search order (the default folder is always among them).
    struct Listed {
        std::string dir;
        std::vector<std::string> files;
        bool builtin_folder;
    };
    std::vector<Listed> listed;
    for (const std::string &dir : dirs) {
        std::error_code ec;
        d.dirs.push_back(SearchedDir{dir, fs::is_directory(dir, ec)});
        if (d.dirs.back().exists) listed.push_back(Listed{dir, plugin_files(dir), same_folder(dir, builtin_dir)});
    }
    // The backends shipped with this libxfer.so: a file of the same name in another folder
    // does not replace one unless XFER_PLUGIN_OVERRIDE=1 says so.
    std::unordered_set<std::string> builtin;
    const char *override_env = secure_getenv("XFER_PLUGIN_OVERRIDE");
    if (override_env == nullptr || std::strcmp(override_env, "1") != 0) {
        for (const Listed &l : listed) {
            if (!l.builtin_folder) continue;
            for (const std::string &file : l.files) builtin.insert(name_of(file));
        }
    }
    for (const auto &[dir, files, builtin_folder] : listed) {
        for (const std::string &file : files) {
            const std::string name = name_of(file);
            if (seen.count(name) != 0) continue; // an earlier folder already has this backend
            if (!only.empty() && name != only) {
                seen.insert(name);
                d.not_opened.push_back(name);
                continue;
            }
            FoundBackend found;
            const fs::path path = fs::path(dir) / file;
            if (!builtin_folder && builtin.count(name) != 0) {
                // Listed, never opened; the built-in one is found in its own folder later.
                found.replaced = true;
                found.plugin = &refused_cached(
                    name, path.string(),
                    msg("plugin ", path.string(), " has the name of the built-in backend '", name, "' in ", builtin_dir,
                        ", which is used instead; not loaded (XFER_PLUGIN_OVERRIDE=1 uses it)"));
                probe(found);
                d.backends.push_back(found);
                continue;
            }
            seen.insert(name);
            const std::string unsafe = unsafe_reason(dir, path);
            found.plugin =
                unsafe.empty() ? &load_cached(name, path.string()) : &refused_cached(name, path.string(), unsafe);
            probe(found);
            d.backends.push_back(found);
        }
    }
    return d;
}

void probe_with_params(FoundBackend &found, const std::vector<std::pair<std::string, std::string>> &params) {
    const Plugin &p = *found.plugin;
    if (!found.available || p.table.probe_params == nullptr) return;
    std::vector<xfer_backend_param_value> values;
    values.reserve(params.size());
    for (const auto &[name, value] : params) values.push_back({name.c_str(), value.c_str()});
    int count = 0;
    ErrorCapture capture;
    const xfer_status st = p.table.probe_params(values.data(), values.size(), &count);
    if (st == XFER_SUCCESS && count >= 1) {
        found.device_count = count;
        return;
    }
    std::string said = capture.captured();
    found.available = false;
    found.device_count = 0;
    if (st == XFER_SUCCESS) {
        found.status = XFER_ERROR_NO_DEVICE;
        found.reason = intern(msg("backend '", p.name, "' probe_params reported ", count, " devices"));
        return;
    }
    // A bad parameter stays a configuration error, so xfer_open answers XFER_ERROR_CONFIG.
    found.status = st == XFER_ERROR_NO_DEVICE || st == XFER_ERROR_CONFIG ? st : XFER_ERROR_BACKEND_UNAVAILABLE;
    found.reason = intern(said.empty() ? msg("backend '", p.name, "' probe_params failed with ", xfer_status_string(st),
                                             " and gave no reason")
                                       : said);
}

const char *intern(const std::string &text) {
    Interned &i = interned();
    std::lock_guard<std::mutex> lock(i.mutex);
    return i.strings.insert(text).first->c_str();
}

void plugin_registry_lock_for_fork() {
    cache().mutex.lock();
    interned().mutex.lock();
}

void plugin_registry_unlock_in_parent() {
    interned().mutex.unlock();
    cache().mutex.unlock();
}

void plugin_registry_reset_in_child() {
    // Held by the forking thread, which is this one: a fresh mutex is the unlocked state.
    new (&interned().mutex) std::mutex;
    new (&cache().mutex) std::mutex;
}

} // namespace xfer::core

// SPDX-License-Identifier: Apache-2.0
#include "plugin_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "test_support.hpp"

namespace xfer::test {
namespace {

thread_local CapturedError t_captured;

void capture_set_error(xfer_status status, const char *message) {
    t_captured.status = status;
    t_captured.message = message != nullptr ? message : "";
    ++t_captured.calls;
}

const xfer_core_services kServices = {sizeof(xfer_core_services), XFER_BACKEND_ABI_MAJOR, XFER_BACKEND_ABI_MINOR,
                                      capture_set_error};

} // namespace

CapturedError &captured_error() { return t_captured; }
void reset_captured_error() { t_captured = CapturedError{}; }
const xfer_core_services *capturing_services() { return &kServices; }

DirectPlugin load_plugin_directly(const std::string &name) {
    static std::mutex mutex;
    static std::map<std::string, DirectPlugin> loaded;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = loaded.find(name);
    if (it != loaded.end()) {
        return it->second;
    }
    DirectPlugin p;
    namespace fs = std::filesystem;
    const std::string file = XFER_BACKEND_FILE_PREFIX + name + XFER_BACKEND_FILE_SUFFIX;
    // Load a private copy: dlopen of the path the core loads would return the core's instance,
    // and calling its entry point with our services would steal the core's error reports.
    char dir_template[] = "/tmp/xfer-cuda-test-XXXXXX";
    const char *dir = mkdtemp(dir_template);
    if (dir == nullptr) {
        p.load_error = "mkdtemp failed";
        loaded[name] = p;
        return p;
    }
    const std::string path = std::string(dir) + "/" + file;
    std::error_code copy_ec;
    fs::copy_file(fs::path(plugin_dir()) / file, path, copy_ec);
    // RTLD_LOCAL: each plugin keeps its own copy of the CUDA helpers, as under the core.
    void *handle = copy_ec ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::error_code remove_ec;
    fs::remove_all(dir, remove_ec); // the mapping outlives the file
    if (copy_ec) {
        p.load_error = "cannot copy " + file + " from " + plugin_dir() + ": " + copy_ec.message();
    } else if (handle == nullptr) {
        const char *err = dlerror();
        p.load_error = err != nullptr ? err : "dlopen failed";
    } else {
        auto entry = reinterpret_cast<xfer_backend_entry_fn>(dlsym(handle, XFER_BACKEND_ENTRY_SYMBOL));
        if (entry == nullptr) {
            p.load_error = "no symbol " XFER_BACKEND_ENTRY_SYMBOL " in " + path;
        } else {
            p.table = entry(&kServices);
        }
    }
    loaded[name] = p;
    return p;
}

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
// Helpers of the core's API tests: temporary config files, mock plugin folders and the
// mock's counters (status assertions, test data and EnvGuard come from tests/support).
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <xfer/xfer.h>
#include <xfer_test/support.hpp>

namespace xfer::test {

inline std::string plugin_dir(const std::string &folder) { return std::string(XFER_TEST_PLUGIN_ROOT) + "/" + folder; }

inline std::string plugin_path(std::initializer_list<const char *> folders) {
    std::string out;
    for (const char *f : folders) out += (out.empty() ? "" : ":") + plugin_dir(f);
    return out;
}

// A file in a fresh temporary folder, removed with the object.
class TempFile {
  public:
    explicit TempFile(const std::string &contents, const std::string &name = "xfer.conf") {
        dir_ = std::filesystem::temp_directory_path() /
               ("xfer-core-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / name).string();
        std::ofstream(path_) << contents;
    }
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    const std::string &path() const { return path_; }
    std::string dir() const { return dir_.string(); }

  private:
    static int &counter() {
        static int n = 0;
        return n;
    }
    std::filesystem::path dir_;
    std::string path_;
};

// A private folder holding a copy of the good mock plugin under a new name.
class PluginCopy {
  public:
    explicit PluginCopy(const std::string &name) : holder_("", "placeholder") {
        dir_ = std::filesystem::path(holder_.dir()) / "plugins";
        std::filesystem::create_directory(dir_);
        ::chmod(dir_.c_str(), 0755);
        file_ = dir_ / ("libxfer-backend-" + name + ".so");
        // The mock's table calls itself "mock": keep that name so only the checks under test differ.
        std::filesystem::copy_file(plugin_dir("good") + "/libxfer-backend-mock.so", file_);
        ::chmod(file_.c_str(), 0755);
    }
    std::string dir() const { return dir_.string(); }
    std::string file() const { return file_.string(); }
    std::string root() const { return holder_.dir(); }

  private:
    TempFile holder_;
    std::filesystem::path dir_;
    std::filesystem::path file_;
};

// Every test starts from an environment with no xfer variable set, whatever the caller's
// shell has, and with the plugin path pointing at the mock folders it names.
class CoreTest : public ::testing::Test {
  protected:
    EnvGuard config_{"XFER_CONFIG", std::nullopt};
    EnvGuard backend_{"XFER_BACKEND", std::nullopt};
    EnvGuard device_{"XFER_DEVICE", std::nullopt};
    EnvGuard path_{"XFER_PLUGIN_PATH", plugin_path({"good"})};
};

// The mock's counters, read from the instance the core loaded (RTLD_NOLOAD: never a second copy).
inline long mock_counter(const std::string &folder, const std::string &name, const char *symbol) {
    std::string file = plugin_dir(folder) + "/libxfer-backend-" + name + ".so";
    void *handle = ::dlopen(file.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return 0; // not loaded yet: nothing alive, nothing called
    auto fn = reinterpret_cast<long (*)()>(::dlsym(handle, symbol));
    long value = fn != nullptr ? fn() : -1;
    ::dlclose(handle); // drops only the reference NOLOAD took
    return value;
}
inline long mockfull_live() { return mock_counter("good", "mockfull", "xfer_mock_live_objects"); }
inline long mockfull_calls() { return mock_counter("good", "mockfull", "xfer_mock_calls"); }

// The xfer_backend_info of `name` as this thread's last enumeration saw it.
inline std::optional<xfer_backend_info> find_backend(const std::string &name) {
    int count = 0;
    if (xfer_backend_count(&count) != XFER_SUCCESS) return std::nullopt;
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        if (xfer_backend_get_info(i, &info) == XFER_SUCCESS && name == info.name) return info;
    }
    return std::nullopt;
}

// Why backend `name` is unavailable ("" when it is available), or "(not listed)".
inline std::string reason_of(const std::string &name) {
    auto info = find_backend(name);
    return info ? std::string(info->reason) : std::string("(not listed)");
}

} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
#include "plugin_check.hpp"

#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "error.hpp"

extern char **environ;

namespace xfer::core {

std::string check_plugin_in_child(const std::string &plugin, const std::string &checker_dir) {
    const char *off = secure_getenv("XFER_PLUGIN_CHECK");
    if (off != nullptr && std::strcmp(off, "0") == 0) return std::string();
    const std::string checker = (std::filesystem::path(checker_dir) / kPluginCheckName).string();
    if (checker_dir.empty() || ::access(checker.c_str(), X_OK) != 0) return std::string();
    std::string arg0 = checker;
    std::string arg1 = plugin;
    char *argv[] = {arg0.data(), arg1.data(), nullptr};
    pid_t pid = 0;
    // posix_spawn (vfork-like in glibc): safe in a threaded process, runs no fork handlers.
    const int spawned = ::posix_spawn(&pid, checker.c_str(), nullptr, nullptr, argv, environ);
    if (spawned != 0) return std::string(); // the checker cannot run here: open the file directly
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(kPluginCheckSeconds);
    int status = 0;
    for (auto pause = std::chrono::microseconds(100);;) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) return std::string(); // reaped elsewhere: cannot tell
        if (clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            return msg("plugin ", plugin, " did not finish loading within ", kPluginCheckSeconds,
                       " s in a check process (", checker, "); not loaded (XFER_PLUGIN_CHECK=0 skips the check)");
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == kPluginCheckSurvived) return std::string();
    const std::string how =
        WIFSIGNALED(status) ? msg("was killed by signal ", WTERMSIG(status), " (", ::strsignal(WTERMSIG(status)), ")")
                            : msg("exited with status ", WEXITSTATUS(status));
    return msg("plugin ", plugin, " ends the process that opens it: a check process (", checker, ") ", how,
               " while loading it and calling its entry point; not loaded (XFER_PLUGIN_CHECK=0 skips the check)");
}

} // namespace xfer::core

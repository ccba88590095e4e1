// SPDX-License-Identifier: Apache-2.0
#include "plugin_check.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "error.hpp"

extern char **environ;

namespace xfer::core {
namespace {

// Closes a descriptor once, on every path out.
class Descriptor {
  public:
    explicit Descriptor(int fd = -1) noexcept : fd_(fd) {}
    ~Descriptor() { reset(); }
    Descriptor(const Descriptor &) = delete;
    Descriptor &operator=(const Descriptor &) = delete;
    int get() const noexcept { return fd_; }
    void reset() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// What the check process said through its pipe before the deadline.
enum class Verdict { survived, ended, timed_out };

Verdict read_verdict(int fd, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Verdict::timed_out;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) return Verdict::ended; // cannot listen: never "survived"
        if (ready <= 0) continue;
        char byte = 0;
        const ssize_t got = ::read(fd, &byte, 1);
        if (got == 1) return byte == kPluginCheckSurvivedByte ? Verdict::survived : Verdict::ended;
        if (got == 0) return Verdict::ended; // every write end closed: the process is gone
        if (errno != EINTR && errno != EAGAIN) return Verdict::ended;
    }
}

// The check process's end, for the message: its exit status or signal when this process can
// still collect it (the application may ignore SIGCHLD or reap its children itself).
std::string how_it_ended(pid_t pid) {
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    if (done != pid) return "ended before it could report (its exit status was collected elsewhere)";
    if (WIFSIGNALED(status))
        return msg("was killed by signal ", WTERMSIG(status), " (", ::strsignal(WTERMSIG(status)), ")");
    return msg("exited with status ", WEXITSTATUS(status));
}

void reap(pid_t pid) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
}

} // namespace

std::string check_plugin_in_child(const std::string &plugin, const std::string &checker_dir) {
    const char *off = secure_getenv("XFER_PLUGIN_CHECK");
    if (off != nullptr && std::strcmp(off, "0") == 0) return std::string();
    const std::string checker = (std::filesystem::path(checker_dir) / kPluginCheckName).string();
    if (checker_dir.empty() || ::access(checker.c_str(), X_OK) != 0) return std::string();
    const std::string advice = "; not loaded (XFER_PLUGIN_CHECK=0 skips the check)";

    // The verdict comes through a pipe that the checker writes only once the plugin's
    // constructors and entry point have returned; its exit status is not needed, so the
    // answer holds whatever the application does with SIGCHLD or its children.
    int ends[2] = {-1, -1};
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        return msg("plugin ", plugin, ": cannot make a pipe for the check process (", std::strerror(errno), ")",
                   advice);
    }
    Descriptor reader(ends[0]);
    Descriptor writer(ends[1]);
    // The checker's copy of the write end, on a number other than the one it has here, so that
    // dup2 clears its close-on-exec flag.
    const int child_fd = writer.get() == kPluginCheckReportFd ? kPluginCheckReportFd + 1 : kPluginCheckReportFd;
    posix_spawn_file_actions_t actions;
    if (::posix_spawn_file_actions_init(&actions) != 0) {
        return msg("plugin ", plugin, ": cannot prepare the check process", advice);
    }
    const std::string fd_text = std::to_string(child_fd);
    std::string arg0 = checker;
    std::string arg1 = plugin;
    std::string arg2 = fd_text;
    char *argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
    pid_t pid = 0;
    // posix_spawn (vfork-like in glibc): safe in a threaded process, runs no fork handlers.
    int spawned = ::posix_spawn_file_actions_adddup2(&actions, writer.get(), child_fd);
    if (spawned == 0) spawned = ::posix_spawn(&pid, checker.c_str(), &actions, nullptr, argv, environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
        return msg("plugin ", plugin, ": cannot start the check process ", checker, " (", std::strerror(spawned), ")",
                   advice);
    }
    writer.reset(); // only the checker holds a write end now: its end is the pipe's end
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kPluginCheckSeconds);
    switch (read_verdict(reader.get(), deadline)) {
    case Verdict::survived:
        reap(pid);
        return std::string();
    case Verdict::timed_out:
        ::kill(pid, SIGKILL);
        reap(pid);
        return msg("plugin ", plugin, " did not finish loading within ", kPluginCheckSeconds, " s in a check process (",
                   checker, ")", advice);
    case Verdict::ended:
        break;
    }
    return msg("plugin ", plugin, " ends the process that opens it: a check process (", checker, ") ",
               how_it_ended(pid), " while loading it and calling its entry point", advice);
}

} // namespace xfer::core

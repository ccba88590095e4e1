// SPDX-License-Identifier: Apache-2.0
#include "bench/import_peer.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

extern char **environ;

namespace xfer::tool {
namespace {

// The peer program beside this executable (bin/ of the build and of an installation).
std::string peer_program() {
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) throw std::runtime_error("cannot find the xfer-tool executable (/proc/self/exe)");
    std::string dir(self, static_cast<std::size_t>(n));
    return dir.substr(0, dir.rfind('/') + 1) + XFER_TOOL_IMPORT_PEER;
}

void write_all(int fd, const void *p, std::size_t n) {
    const auto *c = static_cast<const char *>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw std::runtime_error(std::string("import peer: write: ") + std::strerror(errno));
        c += w;
        n -= static_cast<std::size_t>(w);
    }
}

void read_all(int fd, void *p, std::size_t n) {
    auto *c = static_cast<char *>(p);
    while (n > 0) {
        const ssize_t r = ::read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) throw std::runtime_error("import peer: it went away (see its message above)");
        c += r;
        n -= static_cast<std::size_t>(r);
    }
}

} // namespace

ImportPeer::ImportPeer(const std::string &backend, int device, const xfer_export &e) {
    int fds[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        throw std::runtime_error(std::string("import peer: socketpair: ") + std::strerror(errno));
    }
    socket_ = fds[0];
    // The peer's end is inherited: a duplicate without close-on-exec.
    const int theirs = ::fcntl(fds[1], F_DUPFD, 3);
    ::close(fds[1]);
    const std::string program = peer_program(), fd = std::to_string(theirs), dev = std::to_string(device);
    char *argv[] = {const_cast<char *>(program.c_str()), const_cast<char *>(fd.c_str()),
                    const_cast<char *>(backend.c_str()), const_cast<char *>(dev.c_str()), nullptr};
    const int rc = theirs < 0 ? errno : ::posix_spawn(&pid_, program.c_str(), nullptr, nullptr, argv, environ);
    if (theirs >= 0) ::close(theirs);
    if (rc != 0) {
        pid_ = -1;
        ::close(socket_);
        socket_ = -1;
        throw std::runtime_error("import peer: cannot start " + program + ": " + std::strerror(rc));
    }
    try {
        if (xfer_export_send(socket_, &e) != XFER_SUCCESS) {
            throw std::runtime_error(std::string("xfer_export_send: ") + xfer_last_error());
        }
        PeerReply ready;
        read_all(socket_, &ready, sizeof ready);
        if (ready.status != XFER_SUCCESS) throw std::runtime_error(std::string("import peer: ") + ready.message);
    } catch (...) {
        stop();
        throw;
    }
}

ImportPeer::~ImportPeer() { stop(); }

void ImportPeer::stop() noexcept {
    if (socket_ >= 0) {
        PeerRequest quit;
        quit.op = 'q';
        (void)::write(socket_, &quit, sizeof quit); // a peer that went away is waited for below
        ::close(socket_);
        socket_ = -1;
    }
    if (pid_ > 0) {
        int status = 0;
        (void)::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
}

PeerReply ImportPeer::ask(const PeerRequest &r) {
    write_all(socket_, &r, sizeof r);
    PeerReply reply;
    read_all(socket_, &reply, sizeof reply);
    if (reply.status != XFER_SUCCESS) throw std::runtime_error(std::string("import peer: ") + reply.message);
    return reply;
}

double ImportPeer::timed_copy(xfer_direction dir, std::size_t bytes) {
    return ask({'t', static_cast<std::uint8_t>(dir), bytes}).ms;
}

void ImportPeer::copy(xfer_direction dir, std::size_t bytes) {
    (void)ask({'c', static_cast<std::uint8_t>(dir), bytes});
}

} // namespace xfer::tool

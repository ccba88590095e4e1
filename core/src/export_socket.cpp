// SPDX-License-Identifier: Apache-2.0
// An export's trip to another process: one message over a Unix-domain socket the applications
// own, the blob as data and the descriptors as SCM_RIGHTS (sendmsg / recvmsg). Not a transport:
// it moves a few hundred bytes of description once; the memory itself is shared.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "error.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

// The message: a fixed frame (a stream socket keeps no boundaries, so the receiver reads
// exactly this many bytes).
struct Frame {
    char magic[8]; // "XFERSND\0"
    std::uint32_t blob_bytes;
    std::uint32_t fd_count;
    unsigned char blob[XFER_EXPORT_BLOB_BYTES];
};
constexpr char kFrameMagic[8] = {'X', 'F', 'E', 'R', 'S', 'N', 'D', '\0'};

union Control {
    cmsghdr align;
    char bytes[CMSG_SPACE(sizeof(int) * XFER_EXPORT_MAX_FDS)];
};

// Closes the export's fd_count descriptors (never an entry past them: a zeroed struct must not
// close descriptor 0).
void close_all(xfer_export &e) noexcept {
    for (std::uint32_t i = 0; i < e.fd_count && i < XFER_EXPORT_MAX_FDS; ++i) {
        if (e.fds[i] >= 0) ::close(e.fds[i]);
    }
    for (int &fd : e.fds) fd = -1;
    e.fd_count = 0;
}

} // namespace

extern "C" {

XFER_API xfer_status xfer_export_send(int socket, const xfer_export *in) {
    constexpr const char *fn = "xfer_export_send";
    return guard(fn, [&] {
        if (socket < 0) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": socket is ", socket);
        if (in == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in is NULL");
        if (in->struct_size < sizeof(xfer_export) || in->fd_count > XFER_EXPORT_MAX_FDS || in->blob_bytes == 0 ||
            in->blob_bytes > XFER_EXPORT_BLOB_BYTES) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in is not a filled export (struct_size ", in->struct_size,
                  ", fd_count ", in->fd_count, ", blob_bytes ", in->blob_bytes, ")");
        }
        Frame frame{};
        std::memcpy(frame.magic, kFrameMagic, sizeof kFrameMagic);
        frame.blob_bytes = in->blob_bytes;
        frame.fd_count = in->fd_count;
        std::memcpy(frame.blob, in->blob, in->blob_bytes);
        Control control{};
        msghdr msg{};
        iovec iov{&frame, sizeof frame};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        if (in->fd_count > 0) {
            msg.msg_control = control.bytes;
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * in->fd_count);
            cmsghdr *c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * in->fd_count);
            std::memcpy(CMSG_DATA(c), in->fds, sizeof(int) * in->fd_count);
        }
        // The descriptors go with the first byte; the rest of the frame may take more calls.
        std::size_t sent = 0;
        while (sent < sizeof frame) {
            const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int err = n < 0 ? errno : EPIPE;
                raise(XFER_ERROR_BACKEND, fn, ": sendmsg(socket ", socket, ", ", sizeof frame - sent,
                      " bytes): ", std::strerror(err), " (errno ", err, ")");
            }
            sent += static_cast<std::size_t>(n);
            iov.iov_base = reinterpret_cast<unsigned char *>(&frame) + sent;
            iov.iov_len = sizeof frame - sent;
            msg.msg_control = nullptr;
            msg.msg_controllen = 0;
        }
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_export_receive(int socket, xfer_export *out) {
    constexpr const char *fn = "xfer_export_receive";
    return guard(fn, [&] {
        if (socket < 0) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": socket is ", socket);
        if (out == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": out is NULL");
        if (out->struct_size < sizeof(xfer_export)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": out->struct_size is ", out->struct_size,
                  " (set it to sizeof(xfer_export), ", sizeof(xfer_export), " in this xfer.h)");
        }
        xfer_export e{};
        e.struct_size = sizeof e;
        for (int &fd : e.fds) fd = -1;
        Frame frame{};
        std::size_t got = 0;
        bool truncated = false;
        while (got < sizeof frame) {
            Control control{};
            msghdr msg{};
            iovec iov{reinterpret_cast<unsigned char *>(&frame) + got, sizeof frame - got};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.bytes;
            msg.msg_controllen = sizeof control.bytes;
            const ssize_t n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                const int err = errno;
                close_all(e);
                if (n == 0) raise(XFER_ERROR_BACKEND, fn, ": the peer closed socket ", socket, " before an export");
                raise(XFER_ERROR_BACKEND, fn, ": recvmsg(socket ", socket, "): ", std::strerror(err), " (errno ", err,
                      ")");
            }
            truncated = truncated || (msg.msg_flags & MSG_CTRUNC) != 0;
            for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
                const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (std::size_t i = 0; i < count; ++i) {
                    int fd = -1;
                    std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                    if (e.fd_count < XFER_EXPORT_MAX_FDS) {
                        e.fds[e.fd_count++] = fd;
                    } else {
                        ::close(fd); // more than an export carries: not one of ours
                        truncated = true;
                    }
                }
            }
            got += static_cast<std::size_t>(n);
        }
        if (std::memcmp(frame.magic, kFrameMagic, sizeof kFrameMagic) != 0 || frame.blob_bytes == 0 ||
            frame.blob_bytes > XFER_EXPORT_BLOB_BYTES) {
            close_all(e);
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": the message on socket ", socket,
                  " is not an export sent by xfer_export_send");
        }
        if (truncated || frame.fd_count != e.fd_count) {
            close_all(e);
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": the export on socket ", socket, " came with ", e.fd_count,
                  " descriptor(s) of the ", frame.fd_count,
                  " it was sent with (descriptors cut off: the receiver's "
                  "descriptor limit?)");
        }
        e.version = XFER_EXPORT_VERSION;
        e.blob_bytes = frame.blob_bytes;
        std::memcpy(e.blob, frame.blob, frame.blob_bytes);
        *out = e;
        return XFER_SUCCESS;
    });
}

XFER_API void xfer_export_close(xfer_export *exp) {
    if (exp == nullptr || exp->struct_size < sizeof(xfer_export)) return;
    close_all(*exp);
}

} // extern "C"

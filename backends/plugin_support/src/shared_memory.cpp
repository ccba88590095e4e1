// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <xfer_plugin/errors.hpp>
#include <xfer_plugin/shared_memory.hpp>

namespace xfer::plugin {
namespace {
constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW;
} // namespace

OwnedFd &OwnedFd::operator=(OwnedFd &&o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.release();
    }
    return *this;
}

OwnedFd::~OwnedFd() {
    if (fd_ >= 0) ::close(fd_);
}

std::size_t page_bytes() noexcept {
    const long size = ::sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

std::size_t round_to_pages(std::size_t bytes) noexcept {
    const std::size_t page = page_bytes();
    return (bytes + page - 1) / page * page;
}

xfer_status make_sealed_memfd(const char *name, std::size_t bytes, const char *what, OwnedFd *out) {
    OwnedFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (fd.get() < 0) {
        const int err = errno;
        return fail(err == EMFILE || err == ENFILE ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                    "%s: memfd_create: %s (errno %d)", what, std::strerror(err), err);
    }
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0 || ::fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) {
        const int err = errno;
        return fail(err == ENOSPC || err == ENOMEM ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                    "%s: sizing and sealing a %zu-byte memfd: %s (errno %d)", what, bytes, std::strerror(err), err);
    }
    *out = std::move(fd);
    return XFER_SUCCESS;
}

xfer_status check_sealed_memfd(int fd, std::size_t bytes, const char *kind, const char *what) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "%s: descriptor %d: fstat: %s (errno %d): not an open descriptor of this process (a stale "
                    "export?)",
                    what, fd, std::strerror(err), err);
    }
    if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) != bytes) {
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "%s: descriptor %d is not the memory of a %s (%s of %lld bytes; one of %zu bytes expected)", what,
                    fd, kind, S_ISREG(st.st_mode) ? "a file" : "not a file", static_cast<long long>(st.st_size), bytes);
    }
    const int seals = ::fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (static_cast<unsigned>(seals) & kSeals) != kSeals) {
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "%s: descriptor %d's size is not sealed (F_SEAL_SHRINK | F_SEAL_GROW): another process could "
                    "shrink it under the mapping; not an xfer export",
                    what, fd);
    }
    return XFER_SUCCESS;
}

xfer_status map_memfd(int fd, std::size_t bytes, const char *what, void **out) {
    void *map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        const int err = errno;
        return fail(err == EACCES ? XFER_ERROR_INVALID_ARGUMENT : XFER_ERROR_OUT_OF_MEMORY,
                    "%s: mmap(%zu bytes of a memfd): %s (errno %d)", what, bytes, std::strerror(err), err);
    }
    *out = map;
    return XFER_SUCCESS;
}

xfer_status duplicate_fd(int fd, const char *what, OwnedFd *out) {
    OwnedFd kept(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (kept.get() < 0) {
        const int err = errno;
        return fail(err == EMFILE ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND,
                    "%s: fcntl(F_DUPFD_CLOEXEC): %s (errno %d)", what, std::strerror(err), err);
    }
    *out = std::move(kept);
    return XFER_SUCCESS;
}

} // namespace xfer::plugin

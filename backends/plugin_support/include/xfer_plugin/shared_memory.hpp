// SPDX-License-Identifier: Apache-2.0
// Host memory another process maps: a memfd whose size is sealed (F_SEAL_SHRINK | F_SEAL_GROW),
// so that no process can shrink it under another's mapping (reads would turn into SIGBUS).
// What every backend that exports host memory needs: make one, check one received from another
// process, keep a duplicate. Failures are reported (fail) with a message that starts with `what`.
#pragma once

#include <cstddef>
#include <utility>

#include <xfer/xfer_backend.h>

namespace xfer::plugin {

// Closes a descriptor unless handed on.
class OwnedFd {
  public:
    OwnedFd() = default;
    explicit OwnedFd(int fd) noexcept : fd_(fd) {}
    OwnedFd(OwnedFd &&o) noexcept : fd_(o.release()) {}
    OwnedFd &operator=(OwnedFd &&o) noexcept;
    OwnedFd(const OwnedFd &) = delete;
    OwnedFd &operator=(const OwnedFd &) = delete;
    ~OwnedFd();
    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }

  private:
    int fd_ = -1;
};

// The machine's page size.
std::size_t page_bytes() noexcept;

// `bytes` rounded up to whole pages.
std::size_t round_to_pages(std::size_t bytes) noexcept;

// A new close-on-exec memfd named `name` of exactly `bytes` bytes, its size sealed.
// XFER_ERROR_OUT_OF_MEMORY (no descriptor or no memory left), XFER_ERROR_BACKEND otherwise.
xfer_status make_sealed_memfd(const char *name, std::size_t bytes, const char *what, OwnedFd *out);

// Checks that `fd` (received from another process) is an open memfd of exactly `bytes` bytes
// whose size is sealed: XFER_ERROR_INVALID_ARGUMENT naming what is wrong otherwise. `kind`
// names the memory in the message (e.g. "host buffer").
xfer_status check_sealed_memfd(int fd, std::size_t bytes, const char *kind, const char *what);

// Maps all `bytes` of memfd `fd` shared, readable and writable, at *out (munmap releases it).
// XFER_ERROR_INVALID_ARGUMENT when the descriptor may not be mapped so (EACCES),
// XFER_ERROR_OUT_OF_MEMORY otherwise.
xfer_status map_memfd(int fd, std::size_t bytes, const char *what, void **out);

// A close-on-exec duplicate of `fd` (the caller keeps its own).
xfer_status duplicate_fd(int fd, const char *what, OwnedFd *out);

} // namespace xfer::plugin

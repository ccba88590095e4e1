// SPDX-License-Identifier: Apache-2.0
#include "page_frames.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>

namespace xfer::cuda::user_memory {
namespace {

constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kFrameMask = (std::uint64_t{1} << 55) - 1;
constexpr std::size_t kBlock = 4096; // entries per pread: 32 KiB

// Calls `each(index, frame)` for every page; false if a page is absent or reading fails.
template <class Each>
bool for_each_frame(std::uintptr_t start, std::size_t pages, Each &&each) noexcept {
    const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    std::array<std::uint64_t, kBlock> buf;
    bool ok = true;
    for (std::size_t done = 0; ok && done < pages;) {
        const std::size_t n = pages - done < kBlock ? pages - done : kBlock;
        const off_t at = static_cast<off_t>((start / kPageBytes + done) * sizeof(std::uint64_t));
        const ssize_t got = ::pread(fd, buf.data(), n * sizeof(std::uint64_t), at);
        if (got != static_cast<ssize_t>(n * sizeof(std::uint64_t))) {
            ok = false;
            break;
        }
        for (std::size_t i = 0; i < n; ++i) {
            if ((buf[i] & kPresent) == 0 || (buf[i] & kFrameMask) == 0 || !each(done + i, buf[i] & kFrameMask)) {
                ok = false;
                break;
            }
        }
        done += n;
    }
    ::close(fd);
    return ok;
}

} // namespace

bool page_frames_readable() noexcept {
    static const bool readable = [] {
        static volatile unsigned char probe[kPageBytes * 2];
        probe[kPageBytes] = 1; // present
        const auto page = (reinterpret_cast<std::uintptr_t>(&probe[kPageBytes])) / kPageBytes * kPageBytes;
        return for_each_frame(page, 1, [](std::size_t, std::uint64_t) { return true; });
    }();
    return readable;
}

bool read_page_frames(std::uintptr_t start, std::size_t pages, std::vector<std::uint64_t> *out) noexcept {
    try {
        std::vector<std::uint64_t> frames(pages);
        if (!for_each_frame(start, pages, [&](std::size_t i, std::uint64_t f) {
                frames[i] = f;
                return true;
            })) {
            return false;
        }
        *out = std::move(frames);
        return true;
    } catch (...) {
        return false;
    }
}

bool same_page_frames(std::uintptr_t start, std::size_t pages, const std::uint64_t *expected) noexcept {
    return for_each_frame(start, pages, [&](std::size_t i, std::uint64_t f) { return f == expected[i]; });
}

} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
#include "page_frames.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <mutex>

namespace xfer::cuda::user_memory {
namespace {

constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kFrameMask = (std::uint64_t{1} << 55) - 1;
constexpr std::size_t kBlock = 4096; // entries per pread: 32 KiB

// /proc/self/pagemap, opened once per process: opening it costs more than a small copy (a few
// microseconds), and every tracked copy reads one entry. The descriptor names the process that
// opened it, so a forked child (another pid) opens its own; -1 when it cannot be opened.
int pagemap_fd() noexcept {
    static std::mutex mutex;
    static std::atomic<int> fd{-1};
    static std::atomic<pid_t> owner{0};
    const pid_t self = ::getpid();
    if (owner.load(std::memory_order_acquire) == self) return fd.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex);
    if (owner.load(std::memory_order_relaxed) != self) {
        // The parent's descriptor (inherited across fork) reads the parent's pages: replaced, and
        // closed only here (a thread of this process may still be reading its own).
        const int old = owner.load(std::memory_order_relaxed) != 0 ? fd.load(std::memory_order_relaxed) : -1;
        fd.store(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), std::memory_order_relaxed);
        owner.store(self, std::memory_order_release);
        if (old >= 0) ::close(old);
    }
    return fd.load(std::memory_order_relaxed);
}

// Calls `each(index, frame)` for every page; false if a page is absent or reading fails.
template <class Each>
bool for_each_frame(std::uintptr_t start, std::size_t pages, Each &&each) noexcept {
    const int fd = pagemap_fd();
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

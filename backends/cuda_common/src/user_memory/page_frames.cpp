// SPDX-License-Identifier: Apache-2.0
#include "page_frames.hpp"

#include <fcntl.h>
#include <pthread.h>
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
// microseconds), and every tracked copy reads one entry, so the copy path pays one atomic load.
// The descriptor reads the pages of the process that opened it: a forked child closes the one it
// inherited (pthread_atfork, while it has one thread) and opens its own on first use.
// kNotOpened until then; -1 when it cannot be opened.
constexpr int kNotOpened = -2;
std::atomic<int> g_pagemap{kNotOpened};

void forget_pagemap_in_child() noexcept {
    const int inherited = g_pagemap.exchange(kNotOpened, std::memory_order_relaxed);
    if (inherited >= 0) ::close(inherited);
}

int pagemap_fd() noexcept {
    const int fd = g_pagemap.load(std::memory_order_acquire);
    if (fd != kNotOpened) return fd;
    static std::mutex mutex;
    static bool handler = false;
    std::lock_guard<std::mutex> lock(mutex);
    if (!handler) handler = ::pthread_atfork(nullptr, nullptr, forget_pagemap_in_child) == 0;
    if (g_pagemap.load(std::memory_order_relaxed) == kNotOpened) {
        // Without the fork handler a child would read its parent's pages: nothing is opened.
        const int opened = handler ? ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC) : -1;
        g_pagemap.store(opened >= 0 ? opened : -1, std::memory_order_release);
    }
    return g_pagemap.load(std::memory_order_relaxed);
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

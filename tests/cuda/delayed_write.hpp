// SPDX-License-Identifier: Apache-2.0
// A host function for stream-order tests: queued on a stream, it sleeps long enough that a
// copy queued right after it would certainly read (or the driver stage) its source first if
// stream order were not kept, then writes the new bytes into that source.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>

namespace xfer::test {

struct DelayedWrite {
    unsigned char *dst;
    const unsigned char *src;
    std::size_t bytes;
};

inline void sleep_then_write(void *p) {
    auto *w = static_cast<DelayedWrite *>(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::memcpy(w->dst, w->src, w->bytes);
}

} // namespace xfer::test

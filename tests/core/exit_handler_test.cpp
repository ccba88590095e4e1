// SPDX-License-Identifier: Apache-2.0
// xfer called from an exit handler, after the C++ runtime has destroyed the main thread's
// thread-locals (glibc's exit() does that first): the core's per-thread records must still be
// usable (core/src/thread_lasting.hpp). Before, the cache of recent lookups released its
// records a second time there, freeing a record its handle table still held (ASan:
// heap-use-after-free), and the last error message was written into a freed string.
// A plain program (no test framework: its result is its exit status, set in the handler).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <xfer/xfer.h>

namespace {

xfer_context g_ctx = nullptr;
xfer_stream g_used = nullptr;  // looked up in main: in the thread's cache of recent lookups
xfer_stream g_fresh = nullptr; // never used before the handler: looked up and remembered there
int g_failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "exit_handler_test: %s (last error: %s)\n", what, xfer_last_error());
        ++g_failures;
    }
}

void at_exit() {
    char src[32] = "bytes copied in an exit handler";
    char dst[32] = {};
    expect(xfer_memcpy_async(g_ctx, dst, src, sizeof src, XFER_COPY_DEFAULT, g_used) == XFER_SUCCESS,
           "a copy on the stream main used");
    expect(xfer_memcpy_async(g_ctx, dst, src, sizeof src, XFER_COPY_DEFAULT, g_fresh) == XFER_SUCCESS,
           "a copy on a stream first used here");
    expect(xfer_stream_synchronize(g_fresh) == XFER_SUCCESS && xfer_stream_synchronize(g_used) == XFER_SUCCESS,
           "the streams' synchronisation");
    expect(std::memcmp(src, dst, sizeof src) == 0, "the bytes arrived");
    // A failure records its message in the thread's last error.
    expect(xfer_memcpy_async(g_ctx, nullptr, src, 4, XFER_COPY_DEFAULT, g_used) == XFER_ERROR_INVALID_ARGUMENT,
           "a NULL destination is refused");
    expect(std::strstr(xfer_last_error(), "dst is NULL") != nullptr, "the refusal's message");
    expect(xfer_stream_destroy(g_fresh) == XFER_SUCCESS, "destroying a stream");
    expect(xfer_close(g_ctx) == XFER_SUCCESS, "closing the context with a stream left");
    expect(xfer_stream_query(g_used) == XFER_ERROR_INVALID_HANDLE, "a stream of the closed context is gone");
    int count = 0;
    expect(xfer_backend_count(&count) == XFER_SUCCESS && count > 0, "enumerating the backends");
    if (g_failures != 0) std::_Exit(1);
}

} // namespace

int main() {
    if (xfer_open("mockfull", 0, &g_ctx) != XFER_SUCCESS || xfer_stream_create(g_ctx, &g_used) != XFER_SUCCESS ||
        xfer_stream_create(g_ctx, &g_fresh) != XFER_SUCCESS) {
        std::fprintf(stderr, "exit_handler_test: setup failed: %s\n", xfer_last_error());
        return 1;
    }
    int value = 7, copy = 0;
    expect(xfer_memcpy_async(g_ctx, &copy, &value, sizeof value, XFER_COPY_DEFAULT, g_used) == XFER_SUCCESS &&
               xfer_stream_synchronize(g_used) == XFER_SUCCESS && copy == 7,
           "a copy in main");
    // A long message (on the heap, not in the string's own buffer) before the thread-locals go.
    expect(xfer_stream_query(nullptr) == XFER_ERROR_INVALID_HANDLE && std::string(xfer_last_error()).size() > 32,
           "a long error message in main");
    int count = 0;
    expect(xfer_backend_count(&count) == XFER_SUCCESS, "enumerating the backends in main");
    std::atexit(at_exit);
    return g_failures == 0 ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// The other process of the sharing tests: receives an export over the socket it inherited,
// imports it on a context of its own (share_backend(): XFER_BACKEND, else host) and plays one
// part (argv[2]):
//   write       checks both views (device: kDeviceSeed, host: kHostSeed), writes kPeerSeed into
//               the host view, copies it to the device view, says kWritten, exits 0
//   after-free  imports, says kImported, waits for kFreed (the exporter freed its buffer and
//               closed its descriptors), checks both views, writes kAfterFreeSeed, says
//               kWritten, exits 0
//   die         imports and exits 3 at once, freeing nothing
// Any failure: a message on stderr and exit 1.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "share_patterns.hpp"
#include <xfer/xfer.h>

using namespace xfer::test::share;

namespace {

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "share_peer: %s: %s\n", what, xfer_last_error());
    std::exit(1);
}

void say(int socket, char c) {
    if (::write(socket, &c, 1) != 1) fail("write to the exporter");
}

void expect(int socket, char c) {
    char got = 0;
    if (::read(socket, &got, 1) != 1 || got != c) fail("read from the exporter");
}

void check(const unsigned char *p, unsigned seed, const char *what) {
    if (p == nullptr) fail(what);
    const std::size_t at = first_mismatch(p, kBytes, seed);
    if (at != kBytes) {
        std::fprintf(stderr, "share_peer: %s differs at byte %zu\n", what, at);
        std::exit(1);
    }
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: share_peer SOCKET_FD write|after-free|die\n");
        return 2;
    }
    const int socket = std::atoi(argv[1]);
    const std::string part = argv[2];
    xfer_context ctx = nullptr;
    if (xfer_open(share_backend(), 0, &ctx) != XFER_SUCCESS) fail("xfer_open");
    xfer_export e{};
    e.struct_size = sizeof e;
    if (xfer_export_receive(socket, &e) != XFER_SUCCESS) fail("xfer_export_receive");
    xfer_buffer b = nullptr;
    if (xfer_buffer_import(ctx, &e, &b) != XFER_SUCCESS) fail("xfer_buffer_import");
    xfer_export_close(&e); // the buffer keeps its own descriptor
    if (xfer_buffer_size(b) != kBytes) fail("the imported buffer's size");
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
    if (part == "die") _exit(3);
    if (part == "write") {
        const std::vector<unsigned char> device = read_view(ctx, xfer_device_ptr(b), kBytes);
        check(device.empty() ? nullptr : device.data(), kDeviceSeed, "the device view");
        check(host, kHostSeed, "the host view");
        fill(host, kBytes, kPeerSeed);
        if (xfer_copy(b, XFER_TO_DEVICE, 0, kBytes) != XFER_SUCCESS) fail("xfer_copy");
        say(socket, kWritten);
    } else if (part == "after-free") {
        say(socket, kImported);
        expect(socket, kFreed);
        check(host, kHostSeed, "the host view after the exporter's free");
        const std::vector<unsigned char> device = read_view(ctx, xfer_device_ptr(b), kBytes);
        check(device.empty() ? nullptr : device.data(), kDeviceSeed, "the device view after the exporter's free");
        fill(host, kBytes, kAfterFreeSeed);
        say(socket, kWritten);
    } else {
        fail("unknown part");
    }
    if (xfer_free(b) != XFER_SUCCESS) fail("xfer_free");
    if (xfer_close(ctx) != XFER_SUCCESS) fail("xfer_close");
    return 0;
}

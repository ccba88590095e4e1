// SPDX-License-Identifier: Apache-2.0
// xfer-bench-import-peer SOCKET BACKEND DEVICE: the other process of xfer-tool bench's import
// rows (bench/import_peer.hpp). Receives an export over SOCKET, imports it on a context of
// BACKEND on DEVICE, says it is ready, then copies on the import as asked until told to stop.
// Every failure is a reply with the status and xfer_last_error(); exit 0 after 'q', 1 when the
// socket fails, 2 on bad arguments.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench/import_peer.hpp"

using xfer::tool::PeerReply;
using xfer::tool::PeerRequest;

namespace {

bool reply(int socket, xfer_status st, double ms = 0) {
    PeerReply r;
    r.status = st;
    r.ms = ms;
    if (st != XFER_SUCCESS) std::snprintf(r.message, sizeof r.message, "%s", xfer_last_error());
    return ::write(socket, &r, sizeof r) == static_cast<ssize_t>(sizeof r);
}

bool read_request(int socket, PeerRequest &r) {
    auto *c = reinterpret_cast<char *>(&r);
    std::size_t n = sizeof r;
    while (n > 0) {
        const ssize_t got = ::read(socket, c, n);
        if (got <= 0) return false;
        c += got;
        n -= static_cast<std::size_t>(got);
    }
    return true;
}

struct Peer {
    xfer_context ctx = nullptr;
    xfer_buffer buf = nullptr;
    xfer_stream stream = nullptr;
    xfer_event start = nullptr, end = nullptr;
    ~Peer() {
        if (ctx != nullptr) (void)xfer_close(ctx); // every object of the context with it
    }
    xfer_status open(int socket, const char *backend, int device) {
        xfer_export e{};
        e.struct_size = sizeof e;
        xfer_status st = xfer_open(backend, device, &ctx);
        if (st == XFER_SUCCESS) st = xfer_export_receive(socket, &e);
        if (st == XFER_SUCCESS) st = xfer_buffer_import(ctx, &e, &buf);
        xfer_export_close(&e); // the import keeps its own descriptors
        if (st == XFER_SUCCESS) st = xfer_stream_create(ctx, &stream);
        if (st == XFER_SUCCESS) st = xfer_event_create(ctx, XFER_EVENT_DEFAULT, &start);
        if (st == XFER_SUCCESS) st = xfer_event_create(ctx, XFER_EVENT_DEFAULT, &end);
        return st;
    }
    // The same timed copy as the exporter's own (xfer_copy_async between two events).
    xfer_status copy(const PeerRequest &r, double *ms) {
        if (r.bytes == 0 || r.bytes > xfer_buffer_size(buf) || r.dir > XFER_TO_HOST) return XFER_ERROR_INVALID_ARGUMENT;
        const auto dir = static_cast<xfer_direction>(r.dir);
        xfer_status st = xfer_event_record(start, stream);
        if (st == XFER_SUCCESS) st = xfer_copy_async(buf, dir, 0, r.bytes, stream);
        if (st == XFER_SUCCESS) st = xfer_event_record(end, stream);
        if (st == XFER_SUCCESS) st = xfer_stream_synchronize(stream);
        float elapsed = 0;
        if (st == XFER_SUCCESS && ms != nullptr) st = xfer_event_elapsed_ms(start, end, &elapsed);
        if (ms != nullptr) *ms = elapsed;
        return st;
    }
};

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s SOCKET BACKEND DEVICE (started by xfer-tool bench)\n", argv[0]);
        return 2;
    }
    const int socket = std::atoi(argv[1]);
    Peer peer;
    const xfer_status opened = peer.open(socket, argv[2], std::atoi(argv[3]));
    if (!reply(socket, opened) || opened != XFER_SUCCESS) return 1;
    PeerRequest r;
    while (read_request(socket, r)) {
        if (r.op == 'q') return 0;
        double ms = 0;
        const xfer_status st =
            r.op == 't' || r.op == 'c' ? peer.copy(r, r.op == 't' ? &ms : nullptr) : XFER_ERROR_INVALID_ARGUMENT;
        if (!reply(socket, st, ms)) return 1;
    }
    return 1;
}

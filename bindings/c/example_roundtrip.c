/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program using xfer: random bytes to the device and back, compared.
 * The backend comes from XFER_BACKEND / XFER_CONFIG (xfer_open(NULL, -1, ...)), so the same
 * binary runs on host, pageable, pinned, managed or zerocopy without recompiling.
 * Usage: example_roundtrip [bytes]    Exit status 0 when the bytes came back intact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xfer/xfer.h>

static int fail(const char *what, xfer_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, xfer_status_string(st), xfer_last_error());
    return 1;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
    xfer_context ctx;
    xfer_buffer buf;
    xfer_stream s;
    xfer_context_info info;
    unsigned char *host;
    unsigned char *expect;
    unsigned long long seed = 0x9e3779b97f4a7c15ull;
    size_t i;
    xfer_status st;

    if ((st = xfer_open(NULL, -1, &ctx)) != XFER_SUCCESS) return fail("xfer_open", st);
    if ((st = xfer_context_get_info(ctx, &info)) != XFER_SUCCESS) return fail("xfer_context_get_info", st);
    if ((st = xfer_alloc(ctx, bytes, XFER_ALLOC_DEFAULT, &buf)) != XFER_SUCCESS) return fail("xfer_alloc", st);
    if ((st = xfer_stream_create(ctx, &s)) != XFER_SUCCESS) return fail("xfer_stream_create", st);

    host = (unsigned char *)xfer_host_ptr(buf);
    expect = (unsigned char *)malloc(bytes);
    if (!expect) return 1;
    for (i = 0; i < bytes; ++i) { /* xorshift: random, never all zeros */
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        expect[i] = host[i] = (unsigned char)seed;
    }

    if ((st = xfer_copy_async(buf, XFER_TO_DEVICE, 0, bytes, s)) != XFER_SUCCESS) return fail("to device", st);
    if ((st = xfer_stream_synchronize(s)) != XFER_SUCCESS) return fail("synchronize", st);
    /* Overwrite the host view: only the copy back can restore it (on shared-view backends
       the device view is this same memory, so there we skip the wipe). */
    if (!(info.caps & XFER_CAP_SHARED_VIEW)) memset(host, 0, bytes);
    if ((st = xfer_copy_async(buf, XFER_TO_HOST, 0, bytes, s)) != XFER_SUCCESS) return fail("to host", st);
    if ((st = xfer_stream_synchronize(s)) != XFER_SUCCESS) return fail("synchronize", st);

    if (memcmp(host, expect, bytes) != 0) {
        fprintf(stderr, "mismatch after round trip on backend %s\n", info.backend);
        return 1;
    }
    printf("%s: %lu bytes round-tripped intact\n", info.backend, (unsigned long)bytes);
    free(expect);
    xfer_stream_destroy(s);
    xfer_free(buf);
    return xfer_close(ctx) == XFER_SUCCESS ? 0 : 1;
}

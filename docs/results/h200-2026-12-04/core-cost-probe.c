// SPDX-License-Identifier: Apache-2.0
// What a core copy call costs on a machine's CPU, without CUDA: 21 runs of 50,000 4-byte
// xfer_memcpy_async calls on the backend named by argv[1] (the path-reporting mock backend of
// tests/core/mock_plugins: a take_path, then a memcpy), and the clock reads the statistics use
// (the TSC, clock_gettime). Medians and minima of the runs, ns per call.
// Build: cc -O2 core-cost-probe.c -I api/include path/to/libxfer.so -o mb
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include <xfer/xfer.h>

enum { kRuns = 21, kCalls = 50000 };

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, const char *unit, double *runs) {
    qsort(runs, kRuns, sizeof runs[0], by_value);
    printf("%s: median %.1f %s (min %.1f)\n", what, runs[kRuns / 2], unit, runs[0]);
}

int main(int argc, char **argv) {
    xfer_context ctx;
    xfer_stream stream;
    xfer_buffer buffer;
    if (xfer_open(argc > 1 ? argv[1] : "host", 0, &ctx) != XFER_SUCCESS ||
        xfer_stream_create(ctx, &stream) != XFER_SUCCESS || xfer_alloc(ctx, 4096, 0, &buffer) != XFER_SUCCESS) {
        fprintf(stderr, "%s\n", xfer_last_error());
        return 1;
    }
    char src[64] = {1};
    void *dst = xfer_device_ptr(buffer);
    double runs[kRuns];
    unsigned long long sink = 0;
    for (int r = 0; r < kRuns; ++r) {
        const double t0 = now_ns();
        for (int i = 0; i < kCalls; ++i) xfer_memcpy_async(ctx, dst, src, 4, XFER_COPY_HOST_TO_DEVICE, stream);
        xfer_stream_synchronize(stream);
        runs[r] = (now_ns() - t0) / kCalls;
    }
    report("core+mock copy call", "ns/call", runs);
    for (int r = 0; r < kRuns; ++r) {
        const double t0 = now_ns();
        for (int i = 0; i < kCalls; ++i) sink += __rdtsc();
        runs[r] = (now_ns() - t0) / kCalls;
    }
    report("rdtsc", "ns", runs);
    for (int r = 0; r < kRuns; ++r) {
        const double t0 = now_ns();
        for (int i = 0; i < kCalls; ++i) sink += (unsigned long long)now_ns();
        runs[r] = (now_ns() - t0) / kCalls;
    }
    report("clock_gettime", "ns", runs);
    xfer_close(ctx);
    return (int)(sink & 0); // the sums keep the reads from being optimised away
}

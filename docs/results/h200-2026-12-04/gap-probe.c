// SPDX-License-Identifier: Apache-2.0
// Idle-gap probe: a 64 MiB H2D copy from the same malloc'ed (pageable) array, after an idle gap
// of G ms (sleep), on the pageable backend's buffer-less raw path and its buffer path, against
// the same copy back to back; also the raw cudaMemcpyAsync of pageable memory and the pinned
// backend; and the raw copy after a busy gap (the calling thread spinning instead of sleeping).
// Medians of 9 copies per gap after 2 warm-ups, GB/s. Usage: gap BACKEND [MiB]
// Build: cc -O2 gap-probe.c -I api/include -I /usr/local/cuda/include libxfer.so libcudart.so -o gap
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <xfer/xfer.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
    double x = *(double *)a, y = *(double *)b;
    return x < y ? -1 : x > y;
}
static void busy_ms(double ms) {
    double t = now() + ms * 1e-3;
    volatile unsigned long x = 0;
    while (now() < t) x++;
}
int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "pageable";
    const size_t n = (argc > 2 ? atol(argv[2]) : 64) << 20;
    xfer_context c;
    xfer_stream s;
    if (xfer_open(backend, 0, &c)) {
        fprintf(stderr, "%s\n", xfer_last_error());
        return 1;
    }
    xfer_stream_create(c, &s);
    unsigned char *host = aligned_alloc(4096, n);
    memset(host, 1, n);
    void *dev;
    cudaMalloc(&dev, n);
    xfer_buffer b;
    xfer_alloc(c, n, 0, &b);
    memset(xfer_host_ptr(b), 2, n);
    int gaps[] = {0, 2, 10, 30, 100};
    for (int mode = 0; mode < 4; mode++) {
        const char *name = mode == 0   ? "xfer raw (malloc)"
                           : mode == 1 ? "xfer buffer"
                           : mode == 2 ? "cudaMemcpyAsync (malloc)"
                                       : "xfer raw, busy gap";
        printf("%-26s", name);
        for (int gi = 0; gi < 5; gi++) {
            double r[9];
            for (int k = 0; k < 11; k++) {
                if (gaps[gi]) {
                    if (mode == 3)
                        busy_ms(gaps[gi]);
                    else
                        usleep(gaps[gi] * 1000);
                }
                double t0 = now();
                if (mode == 0 || mode == 3)
                    xfer_memcpy_async(c, dev, host, n, XFER_COPY_HOST_TO_DEVICE, s);
                else if (mode == 1)
                    xfer_copy_async(b, XFER_TO_DEVICE, 0, n, s);
                else
                    cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, (cudaStream_t)xfer_stream_native(s));
                xfer_stream_synchronize(s);
                double dt = now() - t0;
                if (k >= 2) r[k - 2] = n / dt / 1e9;
            }
            qsort(r, 9, sizeof r[0], cmp);
            printf("  gap %3d ms: %5.1f", gaps[gi], r[4]);
        }
        printf("\n");
    }
    xfer_context_stats st = {.struct_size = sizeof st};
    xfer_context_get_stats(c, &st);
    for (int p = 0; p < XFER_PATH_COUNT; p++)
        if (st.paths[p].copies)
            printf("  path %s: %llu copies\n", xfer_copy_path_name(p), (unsigned long long)st.paths[p].copies);
    xfer_close(c);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// What a per-copy choice for user memory needs to know of a machine, measured raw (no model):
//   1. per size and direction: the page-locked DMA (cudaHostAlloc), the driver's pageable copy
//      (malloc), the pageable backend's staged copy of the same malloc memory (xfer_memcpy_async);
//   2. what a registration costs: cudaHostRegister and cudaHostUnregister of touched malloc
//      memory, per size (to fit a per-call and a per-byte cost);
//   3. the host's fill rate: memcpy from malloc memory into page-locked memory, one thread, the
//      source warm (just read) and cold (after 1 GiB of other memory was read);
//   4. why a staged copy after a pause is slower: 64 MiB staged H2D back to back, after a 30 ms
//      sleep, after a 30 ms busy spin, and after reading 1 GiB of other memory (cache evicted,
//      no idle); the same for one thread's memcpy of that source.
// Medians of R repeats after 2 warm-ups; GB/s = 10^9 B/s. Usage: cost-probe [max MiB]
// Build: cc -O2 cost-probe.c -I api/include -I /usr/local/cuda/include -L build-gpu/lib -lxfer -lcudart -o cost-probe
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <xfer/xfer.h>

#define R 7
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, n, sizeof v[0], cmp);
    return v[n / 2];
}
static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "failed: %s (%s / %s)\n", what, cudaGetErrorString(cudaGetLastError()), xfer_last_error());
        exit(1);
    }
}
static unsigned char *evict_buf;
static const size_t evict_bytes = (size_t)1 << 30;
static volatile unsigned long sink;
static void evict(void) { // reads 1 GiB: the caches hold other lines afterwards
    unsigned long s = 0;
    for (size_t i = 0; i < evict_bytes; i += 64) s += evict_buf[i];
    sink = s;
}
static void spin_ms(double ms) {
    double t = now() + ms * 1e-3;
    while (now() < t) sink++;
}

int main(int argc, char **argv) {
    const size_t max = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
    xfer_context ctx;
    xfer_stream xs;
    check(xfer_open("pageable", 0, &ctx) == XFER_SUCCESS, "xfer_open(pageable)");
    check(xfer_stream_create(ctx, &xs) == XFER_SUCCESS, "xfer_stream_create");
    cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
    unsigned char *host = NULL, *pinned = NULL, *dev = NULL;
    check(posix_memalign((void **)&host, 4096, max) == 0, "posix_memalign");
    for (size_t i = 0; i < max; i++) host[i] = (unsigned char)(i * 131 + 7);
    check(cudaHostAlloc((void **)&pinned, max, 0) == cudaSuccess, "cudaHostAlloc");
    memset(pinned, 3, max);
    check(cudaMalloc((void **)&dev, max) == cudaSuccess, "cudaMalloc");
    evict_buf = malloc(evict_bytes);
    memset(evict_buf, 5, evict_bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);

    printf("== per size (median of %d, GB/s; register/unregister in microseconds)\n", R);
    printf("%10s %9s %9s %9s %9s %9s %9s %11s %11s %9s %9s\n", "bytes", "dma_h2d", "dma_d2h", "drv_h2d", "drv_d2h",
           "stg_h2d", "stg_d2h", "register_us", "unreg_us", "fill_warm", "fill_cold");
    for (size_t n = 4096; n <= max; n *= 4) {
        double v[11][R];
        for (int k = 0; k < R + 2; k++) {
            float ms;
            const int j = k - 2;
            // page-locked DMA, both directions, timed with events
            cudaEventRecord(e0, s);
            cudaMemcpyAsync(dev, pinned, n, cudaMemcpyHostToDevice, s);
            cudaEventRecord(e1, s);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&ms, e0, e1);
            if (j >= 0) v[0][j] = n / (ms * 1e-3) / 1e9;
            cudaEventRecord(e0, s);
            cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s);
            cudaEventRecord(e1, s);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&ms, e0, e1);
            if (j >= 0) v[1][j] = n / (ms * 1e-3) / 1e9;
            // the driver's pageable copy: host clock around call + synchronize
            double t = now();
            cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s);
            cudaStreamSynchronize(s);
            if (j >= 0) v[2][j] = n / (now() - t) / 1e9;
            t = now();
            cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
            if (j >= 0) v[3][j] = n / (now() - t) / 1e9;
            // the pageable backend's copy of the same memory (staged above its crossover)
            t = now();
            check(xfer_memcpy_async(ctx, dev, host, n, XFER_COPY_HOST_TO_DEVICE, xs) == XFER_SUCCESS, "xfer h2d");
            xfer_stream_synchronize(xs);
            if (j >= 0) v[4][j] = n / (now() - t) / 1e9;
            t = now();
            check(xfer_memcpy_async(ctx, host, dev, n, XFER_COPY_DEVICE_TO_HOST, xs) == XFER_SUCCESS, "xfer d2h");
            xfer_stream_synchronize(xs);
            if (j >= 0) v[5][j] = n / (now() - t) / 1e9;
            // registration of touched memory
            t = now();
            check(cudaHostRegister(host, n, cudaHostRegisterDefault) == cudaSuccess, "cudaHostRegister");
            double t2 = now();
            check(cudaHostUnregister(host) == cudaSuccess, "cudaHostUnregister");
            if (j >= 0) {
                v[6][j] = (t2 - t) * 1e6;
                v[7][j] = (now() - t2) * 1e6;
            }
            // fill: one thread's memcpy into page-locked memory, warm source then cold
            memcpy(pinned, host, n);
            t = now();
            memcpy(pinned, host, n);
            if (j >= 0) v[8][j] = n / (now() - t) / 1e9;
            evict();
            t = now();
            memcpy(pinned, host, n);
            if (j >= 0) v[9][j] = n / (now() - t) / 1e9;
        }
        printf("%10zu", n);
        for (int c = 0; c < 10; c++) printf(c == 6 || c == 7 ? " %11.1f" : " %9.2f", median(v[c], R));
        printf("\n");
        fflush(stdout);
    }

    const size_t n = (size_t)64 << 20;
    printf("== 64 MiB H2D after a pause (median of %d, GB/s)\n", R);
    const char *names[] = {"back to back", "sleep 30 ms", "spin 30 ms", "evict 1 GiB", "sleep 30 ms + evict"};
    for (int mode = 0; mode < 5; mode++) {
        double staged[R], drv[R], cpu[R];
        for (int k = 0; k < R + 2; k++) {
            const int j = k - 2;
            for (int which = 0; which < 3; which++) {
                if (mode == 1 || mode == 4) usleep(30000);
                if (mode == 2) spin_ms(30);
                if (mode == 3 || mode == 4) evict();
                double t = now();
                if (which == 0) {
                    xfer_memcpy_async(ctx, dev, host, n, XFER_COPY_HOST_TO_DEVICE, xs);
                    xfer_stream_synchronize(xs);
                } else if (which == 1) {
                    cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s);
                    cudaStreamSynchronize(s);
                } else {
                    memcpy(pinned, host, n);
                }
                double r = n / (now() - t) / 1e9;
                if (j >= 0) (which == 0 ? staged : which == 1 ? drv : cpu)[j] = r;
            }
        }
        printf("%-22s staged %6.2f   driver pageable %6.2f   one-thread memcpy %6.2f\n", names[mode], median(staged, R),
               median(drv, R), median(cpu, R));
        fflush(stdout);
    }
    xfer_context_stats st = {.struct_size = sizeof st};
    xfer_context_get_stats(ctx, &st);
    for (int p = 0; p < XFER_PATH_COUNT; p++)
        if (st.paths[p].copies)
            printf("  path %s: %llu copies\n", xfer_copy_path_name((xfer_copy_path)p),
                   (unsigned long long)st.paths[p].copies);
    xfer_close(ctx);
    return 0;
}

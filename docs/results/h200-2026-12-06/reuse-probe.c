// SPDX-License-Identifier: Apache-2.0
// Where the time of a reused user array goes: a fresh anonymous mapping copied 20 times with
// xfer_memcpy_async on the pageable backend, each copy timed alone (host clock, from the call to
// the stream's completion), beside the same 20 copies of a cudaHostAlloc buffer with
// cudaMemcpyAsync. Variant "pause": 50 ms of sleep after copy 2 (the staging engine idle, the
// background registration long done) before copies 3-20. Usage: reuse-probe MiB DIR(h2d|d2h)
// Build: cc -O2 reuse-probe.c -I api/include -I /usr/local/cuda/include -L build-gpu/lib -lxfer -lcudart -o reuse-probe
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <xfer/xfer.h>

#define COPIES 20
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "failed: %s (%s / %s)\n", what, cudaGetErrorString(cudaGetLastError()), xfer_last_error());
        exit(1);
    }
}
int main(int argc, char **argv) {
    const size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
    const int h2d = argc < 3 || strcmp(argv[2], "d2h") != 0;
    xfer_context ctx;
    xfer_stream xs;
    check(xfer_open("pageable", 0, &ctx) == XFER_SUCCESS, "xfer_open(pageable)");
    check(xfer_stream_create(ctx, &xs) == XFER_SUCCESS, "xfer_stream_create");
    cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
    void *dev, *pinned;
    check(cudaMalloc(&dev, n) == cudaSuccess, "cudaMalloc");
    check(cudaHostAlloc(&pinned, n, cudaHostAllocDefault) == cudaSuccess, "cudaHostAlloc");
    memset(pinned, 1, n);
    printf("%zu MiB %s, ms per copy 1..%d\n", n >> 20, h2d ? "h2d" : "d2h", COPIES);
    for (int variant = 0; variant < 3; ++variant) {
        for (int rep = 0; rep < 3; ++rep) {
            double ms[COPIES];
            unsigned char *u = NULL;
            if (variant < 2) {
                u = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                check(u != MAP_FAILED, "mmap");
                memset(u, rep + 2, n);
            }
            for (int k = 0; k < COPIES; ++k) {
                if (variant == 1 && k == 2) usleep(50000);
                const double t0 = now();
                if (variant < 2) {
                    check(xfer_memcpy_async(ctx, h2d ? dev : (void *)u, h2d ? (void *)u : dev, n,
                                            h2d ? XFER_COPY_HOST_TO_DEVICE : XFER_COPY_DEVICE_TO_HOST,
                                            xs) == XFER_SUCCESS,
                          "xfer_memcpy_async");
                } else {
                    check(cudaMemcpyAsync(h2d ? dev : pinned, h2d ? pinned : dev, n,
                                          h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s) == cudaSuccess,
                          "cudaMemcpyAsync");
                }
                check(xfer_stream_synchronize(xs) == XFER_SUCCESS, "xfer_stream_synchronize");
                ms[k] = (now() - t0) * 1e3;
            }
            double sum = 0;
            for (int k = 2; k < COPIES; ++k) sum += ms[k];
            printf("%-7s rep %d: copies 3-20 %.2f ms (%.2f GB/s) |",
                   variant == 0   ? "xfer"
                   : variant == 1 ? "pause"
                                  : "pinned",
                   rep, sum, (double)n * (COPIES - 2) / (sum * 1e-3) / 1e9);
            for (int k = 0; k < COPIES; ++k) printf(" %.3f", ms[k]);
            printf("\n");
            if (u) {
                (void)xfer_unregister(ctx, u);
                munmap(u, n);
            }
        }
    }
    xfer_stream_destroy(xs);
    xfer_close(ctx);
    return 0;
}

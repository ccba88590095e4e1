// SPDX-License-Identifier: Apache-2.0
// Whether how a user array gets page-locked changes the DMA rate from it afterwards. A fresh
// 64 MiB anonymous mapping, filled, then page-locked (cudaHostRegister) in one of four ways, then
// 20 cudaMemcpyAsync H2D from it, each timed alone; beside a cudaHostAlloc buffer. Ways:
//   main    the calling thread registers it, nothing else touching it;
//   thread  another thread registers it;
//   read    another thread registers it while this thread reads it (memcpy, as a staging fill);
//   staged  another thread registers it while xfer's pageable backend copies it (staged).
// Also the array's AnonHugePages (/proc/self/smaps) before registering.
// Usage: register-probe [MiB]
// Build: cc -O2 register-probe.c -I api/include -I /usr/local/cuda/include -L build-gpu/lib -lxfer -lcudart -lpthread -o register-probe
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

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
        fprintf(stderr, "failed: %s (%s)\n", what, cudaGetErrorString(cudaGetLastError()));
        exit(1);
    }
}
static long huge_kib(const void *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && strchr(line, '-') == line + strspn(line, "0123456789abcdef"))
            in = (unsigned long)p >= lo && (unsigned long)p < hi;
        else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
            break;
    }
    if (f) fclose(f);
    return kib;
}
struct reg {
    void *p;
    size_t n;
};
static void *do_register(void *arg) {
    struct reg *r = arg;
    cudaSetDevice(0);
    check(cudaHostRegister(r->p, r->n, cudaHostRegisterPortable | cudaHostRegisterMapped) == cudaSuccess,
          "cudaHostRegister");
    return NULL;
}
int main(int argc, char **argv) {
    const size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
    xfer_context ctx;
    xfer_stream xs;
    check(xfer_open("pageable", 0, &ctx) == XFER_SUCCESS, "xfer_open(pageable)");
    check(xfer_stream_create(ctx, &xs) == XFER_SUCCESS, "xfer_stream_create");
    cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
    void *dev, *pinned;
    unsigned char *scratch = malloc(n);
    check(cudaMalloc(&dev, n) == cudaSuccess, "cudaMalloc");
    check(cudaHostAlloc(&pinned, n, cudaHostAllocDefault) == cudaSuccess, "cudaHostAlloc");
    memset(pinned, 1, n);
    const char *ways[] = {"main", "thread", "read", "staged", "pinned"};
    printf("%zu MiB h2d, ms per copy 1..%d after page-locking\n", n >> 20, COPIES);
    for (int rep = 0; rep < 3; ++rep) {
        for (int w = 0; w < 5; ++w) {
            unsigned char *u = pinned;
            long huge = -1;
            if (w < 4) {
                u = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                check(u != MAP_FAILED, "mmap");
                memset(u, rep + 2, n);
                huge = huge_kib(u);
                struct reg r = {u, n};
                pthread_t t;
                if (w == 0) {
                    do_register(&r);
                } else {
                    pthread_create(&t, NULL, do_register, &r);
                    if (w == 2) memcpy(scratch, u, n);
                    if (w == 3) {
                        check(xfer_memcpy_async(ctx, dev, u, n, XFER_COPY_HOST_TO_DEVICE, xs) == XFER_SUCCESS, "xfer");
                        xfer_stream_synchronize(xs);
                    }
                    pthread_join(t, NULL);
                }
            }
            double ms[COPIES], sum = 0;
            for (int k = 0; k < COPIES; ++k) {
                const double t0 = now();
                check(cudaMemcpyAsync(dev, u, n, cudaMemcpyHostToDevice, s) == cudaSuccess, "cudaMemcpyAsync");
                check(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
                ms[k] = (now() - t0) * 1e3;
                if (k >= 2) sum += ms[k];
            }
            printf("%-7s rep %d: huge %ld KiB, copies 3-20 %.2f ms (%.2f GB/s) |", ways[w], rep, huge, sum,
                   (double)n * (COPIES - 2) / (sum * 1e-3) / 1e9);
            for (int k = 0; k < COPIES; ++k) printf(" %.3f", ms[k]);
            printf("\n");
            if (w < 4) {
                cudaHostUnregister(u);
                munmap(u, n);
            }
        }
    }
    xfer_stream_destroy(xs);
    xfer_close(ctx);
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// Whether DMAs from a page-locked user array slow down while other cores still hold its lines in
// their private caches (after those cores read it, as the staging engine's workers do), and what
// gives the rate back. A fresh anonymous mapping of N MiB, filled, page-locked by this thread
// (cudaHostRegister), then one of these before 20 cudaMemcpyAsync H2D from it, each timed alone:
//   fresh        nothing (baseline)
//   read         R threads each copy their slice of the array into a scratch buffer, then exit
//   read+flush   as read, then this thread evicts every line of the array (clflushopt)
//   read+demote  as read, each thread moving its slice's lines to the shared cache (cldemote)
//   read+own     as read, each thread evicting its own slice's lines (clflushopt)
//   read+sleep   as read, then 50 ms of sleep
//   xfer         two staged copies through xfer's pageable backend before page-locking
//   xfer+flush   as xfer, then this thread evicts every line of the array (clflushopt)
//   pinned       a cudaHostAlloc buffer (no mapping, no reads)
// A * marks an array xfer's registration cache page-locked. Also the time each flush took. Usage: snoop-probe [MiB] [readers]
// Build: cc -O2 snoop-probe.c -I api/include -I /usr/local/cuda/include -L build-gpu/lib -lxfer -lcudart -lpthread
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <xfer/xfer.h>

#define COPIES 20
#define LINE 64
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
__attribute__((target("clflushopt"))) static void flush(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i += LINE) _mm_clflushopt((void *)(p + i));
    _mm_sfence();
}
__attribute__((target("cldemote"))) static void demote(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i += LINE) _cldemote((void *)(p + i));
}
enum after { NOTHING, DEMOTE, FLUSH_OWN };
struct reader {
    const unsigned char *p;
    size_t n;
    unsigned char *scratch;
    enum after after;
    double secs;
};
static void *read_slice(void *arg) {
    struct reader *r = arg;
    const double t0 = now();
    memcpy(r->scratch, r->p, r->n);
    if (r->after == DEMOTE) demote(r->p, r->n);
    if (r->after == FLUSH_OWN) flush(r->p, r->n);
    r->secs = now() - t0;
    return NULL;
}
// R threads read [u, u + n) in slices; returns the slowest thread's seconds.
static double read_by_threads(unsigned char *u, size_t n, int readers, unsigned char *scratch, enum after after) {
    pthread_t t[64];
    struct reader r[64];
    const size_t slice = n / readers / 4096 * 4096;
    double worst = 0;
    for (int i = 0; i < readers; ++i) {
        r[i] = (struct reader){u + i * slice, i == readers - 1 ? n - i * slice : slice, scratch + i * slice, after, 0};
        pthread_create(&t[i], NULL, read_slice, &r[i]);
    }
    for (int i = 0; i < readers; ++i) {
        pthread_join(t[i], NULL);
        if (r[i].secs > worst) worst = r[i].secs;
    }
    return worst;
}
int main(int argc, char **argv) {
    const size_t n = (size_t)(argc > 1 ? atoi(argv[1]) : 64) << 20;
    int readers = argc > 2 ? atoi(argv[2]) : 15;
    if (readers < 1 || readers > 64) readers = 15;
    xfer_context ctx;
    xfer_stream xs;
    check(xfer_open("pageable", 0, &ctx) == XFER_SUCCESS, "xfer_open(pageable)");
    check(xfer_stream_create(ctx, &xs) == XFER_SUCCESS, "xfer_stream_create");
    cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
    void *dev, *pinned;
    unsigned char *scratch = malloc(n);
    memset(scratch, 0, n);
    check(cudaMalloc(&dev, n) == cudaSuccess, "cudaMalloc");
    check(cudaHostAlloc(&pinned, n, cudaHostAllocDefault) == cudaSuccess, "cudaHostAlloc");
    memset(pinned, 1, n);
    const char *ways[] = {"fresh",      "read", "read+flush", "read+demote", "read+own",
                          "read+sleep", "xfer", "xfer+flush", "pinned"};
    const int nways = (int)(sizeof ways / sizeof ways[0]);
    printf("%zu MiB h2d, %d readers; ms per copy 1..%d after page-locking\n", n >> 20, readers, COPIES);
    for (int rep = 0; rep < 3; ++rep) {
        for (int w = 0; w < nways; ++w) {
            unsigned char *u = pinned;
            double extra = 0; // seconds of the reads or of the flush
            int by_xfer = 0;  // page-locked by xfer's registration cache
            if (w < nways - 1) {
                u = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                check(u != MAP_FAILED, "mmap");
                memset(u, rep + 2, n);
                if (w >= 6) { // xfer stages two copies of the unregistered array first
                    for (int k = 0; k < 2; ++k) {
                        check(xfer_memcpy_async(ctx, dev, u, n, XFER_COPY_HOST_TO_DEVICE, xs) == XFER_SUCCESS, "xfer");
                        check(xfer_stream_synchronize(xs) == XFER_SUCCESS, "xfer_stream_synchronize");
                    }
                }
                // xfer's registration cache may have page-locked it already (a range copied twice).
                const cudaError_t reg = cudaHostRegister(u, n, cudaHostRegisterPortable | cudaHostRegisterMapped);
                if (reg == cudaErrorHostMemoryAlreadyRegistered)
                    (void)cudaGetLastError();
                else
                    check(reg == cudaSuccess, "cudaHostRegister");
                by_xfer = reg != cudaSuccess;
                if (w >= 1 && w <= 5)
                    extra = read_by_threads(u, n, readers, scratch, w == 3 ? DEMOTE : w == 4 ? FLUSH_OWN : NOTHING);
                if (w == 2 || w == 7) {
                    const double t0 = now();
                    flush(u, n);
                    extra = now() - t0;
                }
                if (w == 5) usleep(50000);
            }
            double ms[COPIES], sum = 0;
            for (int k = 0; k < COPIES; ++k) {
                const double t0 = now();
                check(cudaMemcpyAsync(dev, u, n, cudaMemcpyHostToDevice, s) == cudaSuccess, "cudaMemcpyAsync");
                check(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
                ms[k] = (now() - t0) * 1e3;
                if (k >= 2) sum += ms[k];
            }
            printf("%-11s%s rep %d: extra %7.3f ms, copies 3-20 %6.2f ms (%5.2f GB/s) |", ways[w], by_xfer ? "*" : " ",
                   rep, extra * 1e3, sum, (double)n * (COPIES - 2) / (sum * 1e-3) / 1e9);
            for (int k = 0; k < COPIES; ++k) printf(" %.3f", ms[k]);
            printf("\n");
            fflush(stdout);
            if (u != pinned) {
                if (by_xfer)
                    (void)xfer_unregister(ctx, u);
                else
                    cudaHostUnregister(u);
                munmap(u, n);
            }
        }
    }
    xfer_stream_destroy(xs);
    xfer_close(ctx);
    return 0;
}

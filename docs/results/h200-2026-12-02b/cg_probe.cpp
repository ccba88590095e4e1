// Instruction counts per call under callgrind (one dump per variant), one backend per process.
#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <xfer/xfer.h>
typedef CUresult (*HtoD)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*DtoH)(void *, CUdeviceptr, size_t, CUstream);
template <class F>
F entry(const char *n) {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult r{};
    if (cudaGetDriverEntryPointByVersion(n, &f, 12000, cudaEnableDefault, &r) != cudaSuccess) {
        printf("no %s\n", n);
        exit(1);
    }
    return (F)f;
}
#define N 2048
template <class F>
void run(const char *name, cudaStream_t s, F f) {
    for (int i = 0; i < 256; ++i) f(); // warm
    cudaStreamSynchronize(s);
    CALLGRIND_ZERO_STATS;
    for (int b = 0; b < N / 256; ++b) {
        CALLGRIND_TOGGLE_COLLECT;
        for (int i = 0; i < 256; ++i) f();
        CALLGRIND_TOGGLE_COLLECT;
        cudaStreamSynchronize(s);
    }
    CALLGRIND_DUMP_STATS_AT(name);
}
int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "pinned";
    xfer_context ctx;
    if (xfer_open(backend, 0, &ctx) != XFER_SUCCESS) {
        printf("open %s: %s\n", backend, xfer_last_error());
        return 1;
    }
    xfer_buffer a, c;
    xfer_stream xs;
    if (xfer_alloc(ctx, 65536, 0, &a) || xfer_alloc(ctx, 65536, 0, &c) || xfer_stream_create(ctx, &xs)) {
        printf("%s\n", xfer_last_error());
        return 1;
    }
    bool shared = strcmp(backend, "pinned") != 0 && strcmp(backend, "pageable") != 0;
    char *h = (char *)xfer_host_ptr(a);
    char *d = (char *)xfer_device_ptr(c);
    cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
    HtoD htod = entry<HtoD>("cuMemcpyHtoDAsync");
    DtoH dtoh = entry<DtoH>("cuMemcpyDtoHAsync");
    xfer_copy_kind k1 = shared ? XFER_COPY_DEFAULT : XFER_COPY_HOST_TO_DEVICE,
                   k2 = shared ? XFER_COPY_DEFAULT : XFER_COPY_DEVICE_TO_HOST;
    cudaMemcpyKind r1 = shared ? cudaMemcpyDefault : cudaMemcpyHostToDevice,
                   r2 = shared ? cudaMemcpyDefault : cudaMemcpyDeviceToHost;
    CALLGRIND_START_INSTRUMENTATION;
    std::string p = std::string(backend) + "-";
    run((p + "xfer-h2d").c_str(), s, [&] { xfer_memcpy_async(ctx, d, h, 4, k1, xs); });
    run((p + "runtime-h2d").c_str(), s, [&] { cudaMemcpyAsync(d, h, 4, r1, s); });
    run((p + "driver-h2d").c_str(), s, [&] { htod((CUdeviceptr)d, h, 4, s); });
    run((p + "xfer-d2h").c_str(), s, [&] { xfer_memcpy_async(ctx, h, d, 4, k2, xs); });
    run((p + "runtime-d2h").c_str(), s, [&] { cudaMemcpyAsync(h, d, 4, r2, s); });
    run((p + "driver-d2h").c_str(), s, [&] { dtoh(h, (CUdeviceptr)d, 4, s); });
    run((p + "xfer-query").c_str(), s, [&] { xfer_stream_query(xs); });
    run((p + "runtime-query").c_str(), s, [&] { cudaStreamQuery(s); });
    printf("%s done: %s\n", backend, xfer_last_error());
    xfer_stream_destroy(xs);
    xfer_free(a);
    xfer_free(c);
    xfer_close(ctx);
}

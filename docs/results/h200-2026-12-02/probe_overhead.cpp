// Host time per 4-byte async copy, one process, one stream (the xfer stream's native one):
// the runtime's cudaMemcpyAsync, the driver's cuMemcpy*Async, and xfer_memcpy_async, rotating
// order, 8 x 256 calls per sample, 2 warm-up rounds, medians of 11 and of per-round differences.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <xfer/xfer.h>
using Clock = std::chrono::steady_clock;
typedef CUresult (*HtoD)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*DtoH)(void *, CUdeviceptr, size_t, CUstream);
template <class F>
F entry(const char *n) {
    void *f = nullptr;
    cudaDriverEntryPointQueryResult r{};
    if (cudaGetDriverEntryPointByVersion(n, &f, 12000, cudaEnableDefault, &r) != cudaSuccess ||
        r != cudaDriverEntryPointSuccess) {
        printf("no %s\n", n);
        exit(1);
    }
    return (F)f;
}
static double med(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
int main(int argc, char **argv) {
    {
        xfer_context ctx;
        if (xfer_open("host", 0, &ctx) != XFER_SUCCESS) {
            printf("open host: %s\n", xfer_last_error());
            return 1;
        }
        xfer_buffer a;
        xfer_alloc(ctx, 65536, XFER_ALLOC_DEFAULT, &a);
        xfer_stream xs;
        xfer_stream_create(ctx, &xs);
        char *h = (char *)xfer_host_ptr(a);
        char *d = (char *)xfer_device_ptr(a);
        auto time = [&](const std::function<void()> &call) {
            auto t0 = Clock::now();
            for (int i = 0; i < 2048; ++i) call();
            return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / 2048;
        };
        std::vector<double> x, m, q, diff;
        for (int r = 0; r < 13; ++r) {
            double a1 = time([&] { xfer_memcpy_async(ctx, d + 64, h, 4, XFER_COPY_HOST_TO_DEVICE, xs); });
            double b1 = time([&] {
                std::memcpy(d + 64, h, 4);
                asm volatile("" ::: "memory");
            });
            double c1 = time([&] { xfer_stream_query(xs); });
            if (r < 2) continue;
            x.push_back(a1);
            m.push_back(b1);
            q.push_back(c1);
            diff.push_back(a1 - b1);
        }
        printf("host      h2d memcpy %7.1f  xfer %7.1f  xfer_stream_query %7.1f ns | xfer-memcpy %+6.1f (the core and "
               "the host plugin)\n",
               med(m), med(x), med(q), med(diff));
        xfer_stream_destroy(xs);
        xfer_free(a);
        xfer_close(ctx);
    }
    HtoD htod = entry<HtoD>("cuMemcpyHtoDAsync");
    DtoH dtoh = entry<DtoH>("cuMemcpyDtoHAsync");
    for (const char *backend : {"pinned", "pageable", "zerocopy", "managed"}) {
        xfer_context ctx;
        if (xfer_open(backend, 0, &ctx) != XFER_SUCCESS) {
            printf("open %s: %s\n", backend, xfer_last_error());
            return 1;
        }
        xfer_buffer a, b;
        xfer_alloc(ctx, 65536, XFER_ALLOC_DEFAULT, &a);
        xfer_alloc(ctx, 65536, XFER_ALLOC_DEFAULT, &b);
        xfer_stream xs;
        xfer_stream_create(ctx, &xs);
        cudaStream_t s = (cudaStream_t)xfer_stream_native(xs);
        char *host = (char *)xfer_host_ptr(a);
        char *dev = (char *)xfer_device_ptr(b);
        char *dhost = (char *)xfer_host_ptr(b);
        const bool shared = dev == dhost;
        auto time = [&](const std::function<void()> &call) {
            double ns = 0;
            for (int k = 0; k < 8; ++k) {
                auto t0 = Clock::now();
                for (int i = 0; i < 256; ++i) call();
                ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
                cudaStreamSynchronize(s);
            }
            return ns / 2048;
        };
        for (int dir = 0; dir < 2; ++dir) {
            void *dst = dir == 0 ? (void *)dev : (void *)host;
            const void *src = dir == 0 ? (const void *)host : (const void *)dev;
            const xfer_copy_kind kind = shared     ? XFER_COPY_DEFAULT
                                        : dir == 0 ? XFER_COPY_HOST_TO_DEVICE
                                                   : XFER_COPY_DEVICE_TO_HOST;
            const cudaMemcpyKind ck = shared     ? cudaMemcpyDefault
                                      : dir == 0 ? cudaMemcpyHostToDevice
                                                 : cudaMemcpyDeviceToHost;
            std::vector<std::function<void()>> f = {
                [&] { cudaMemcpyAsync(dst, src, 4, ck, s); },
                [&] {
                    if (dir == 0)
                        htod((CUdeviceptr)dst, src, 4, s);
                    else
                        dtoh(dst, (CUdeviceptr)src, 4, s);
                },
                [&] { xfer_memcpy_async(ctx, dst, src, 4, kind, xs); },
                [&] { xfer_stream_query(xs); },
                [&] { cudaStreamQuery(s); },
            };
            std::vector<double> t[5], d_xr, d_xd, d_dr, d_q;
            for (int r = 0; r < 13; ++r) {
                double v[5];
                for (int j = 0; j < 5; ++j) {
                    int i = (j + r) % 5;
                    v[i] = time(f[i]);
                }
                if (r < 2) continue;
                for (int i = 0; i < 5; ++i) t[i].push_back(v[i]);
                d_xr.push_back(v[2] - v[0]);
                d_xd.push_back(v[2] - v[1]);
                d_dr.push_back(v[1] - v[0]);
                d_q.push_back(v[3] - v[4]);
            }
            printf("%-9s %s runtime %7.1f  driver %7.1f  xfer %7.1f  xfer_stream_query %7.1f  cudaStreamQuery %7.1f ns "
                   "| xfer-runtime %+6.1f  xfer-driver %+6.1f  driver-runtime %+6.1f  query xfer-raw %+6.1f\n",
                   backend, dir == 0 ? "h2d" : "d2h", med(t[0]), med(t[1]), med(t[2]), med(t[3]), med(t[4]), med(d_xr),
                   med(d_xd), med(d_dr), med(d_q));
        }
        printf("errors: %s / %s\n", cudaGetErrorString(cudaStreamSynchronize(s)), xfer_last_error());
        xfer_stream_destroy(xs);
        xfer_free(a);
        xfer_free(b);
        xfer_close(ctx);
    }
}

// SPDX-License-Identifier: Apache-2.0
// The program behind probe-driver-copy.txt. Build: g++ -O2 -std=c++17 probe_driver_copy.cpp
// -I/usr/local/cuda/include build-gpu/lib/libcudart.so.13 (run with that runtime on the library path).
// Host time per small async copy: runtime cudaMemcpyAsync vs the driver's cuMemcpy*Async
// (through cudaGetDriverEntryPointByVersion), alternating, medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>
using Clock = std::chrono::steady_clock;
typedef CUresult (*HtoD)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*DtoH)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*Any)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
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
int main() {
    cudaFree(0);
    HtoD htod = entry<HtoD>("cuMemcpyHtoDAsync");
    DtoH dtoh = entry<DtoH>("cuMemcpyDtoHAsync");
    Any any = entry<Any>("cuMemcpyAsync");
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    char *pin, *dev, *man, *map;
    char *pag = (char *)malloc(65536);
    cudaHostAlloc((void **)&pin, 65536, cudaHostAllocMapped);
    cudaMalloc((void **)&dev, 65536);
    cudaMallocManaged((void **)&man, 65536);
    cudaHostGetDevicePointer((void **)&map, pin, 0);
    struct Case {
        const char *name;
        void (*f)(void *);
    };
    struct Ctx {
        HtoD htod;
        DtoH dtoh;
        Any any;
        cudaStream_t s;
        char *pin, *dev, *man, *map, *pag;
    } c{htod, dtoh, any, s, pin, dev, man, map, pag};
    static Ctx *g;
    g = &c;
    auto time = [&](auto call) {
        double ns = 0;
        for (int b = 0; b < 8; ++b) {
            auto t0 = Clock::now();
            for (int i = 0; i < 256; ++i) call();
            ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
            cudaStreamSynchronize(s);
        }
        return ns / 2048;
    };
    struct Pair {
        const char *name;
        std::function<void()> rt, drv;
    };
    std::vector<Pair> pairs = {
        {"pinned h2d", [&] { cudaMemcpyAsync(dev, pin, 4, cudaMemcpyHostToDevice, s); },
         [&] { htod((CUdeviceptr)dev, pin, 4, s); }},
        {"pinned d2h", [&] { cudaMemcpyAsync(pin, dev, 4, cudaMemcpyDeviceToHost, s); },
         [&] { dtoh(pin, (CUdeviceptr)dev, 4, s); }},
        {"pageable h2d", [&] { cudaMemcpyAsync(dev, pag, 4, cudaMemcpyHostToDevice, s); },
         [&] { htod((CUdeviceptr)dev, pag, 4, s); }},
        {"pageable d2h", [&] { cudaMemcpyAsync(pag, dev, 4, cudaMemcpyDeviceToHost, s); },
         [&] { dtoh(pag, (CUdeviceptr)dev, 4, s); }},
        {"managed default", [&] { cudaMemcpyAsync(man + 64, man, 4, cudaMemcpyDefault, s); },
         [&] { any((CUdeviceptr)(man + 64), (CUdeviceptr)man, 4, s); }},
        {"mapped default", [&] { cudaMemcpyAsync(map + 64, pin, 4, cudaMemcpyDefault, s); },
         [&] { any((CUdeviceptr)(map + 64), (CUdeviceptr)pin, 4, s); }},
        {"pinned h2d default", [&] { cudaMemcpyAsync(dev, pin, 4, cudaMemcpyDefault, s); },
         [&] { any((CUdeviceptr)dev, (CUdeviceptr)pin, 4, s); }},
    };
    for (auto &p : pairs) {
        std::vector<double> rt, drv, diff;
        for (int w = 0; w < 2; ++w) {
            time(p.rt);
            time(p.drv);
        }
        for (int r = 0; r < 11; ++r) {
            double a = time(p.rt), b = time(p.drv);
            rt.push_back(a);
            drv.push_back(b);
            diff.push_back(b - a);
        }
        auto med = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        printf("%-20s runtime %7.1f ns  driver %7.1f ns  driver-runtime %+7.1f ns (median of per-pair)\n", p.name,
               med(rt), med(drv), med(diff));
    }
    printf("errors: %s\n", cudaGetErrorString(cudaStreamSynchronize(s)));
}

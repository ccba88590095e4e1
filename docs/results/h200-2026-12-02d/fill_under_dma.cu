// The host's fill rate while the link reads: what bounds a copy staged through page-locked memory
// (docs/performance.md). 15 persistent threads copy 64 MiB of pageable memory into
// page-locked memory in 512 KiB pieces (the staging workers' fill) alone, and while a 256 MiB
// cudaMemcpyAsync from other page-locked memory to the device runs (its DMA reads host memory at
// the link's rate). Variants: the source in 4 KiB pages or in transparent huge pages
// (MADV_HUGEPAGE), the destination from cudaHostAlloc or registered with cudaHostRegister (huge
// pages or 4 KiB pages). Alternating, medians of 11. Build (no device needed):
//   nvcc -O2 -std=c++17 -o fill_under_dma fill_under_dma.cu
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

using Clock = std::chrono::steady_clock;
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                              \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

constexpr size_t kFill = 64u << 20, kPiece = 512u << 10, kBg = 256u << 20;

struct Pool {
    std::vector<std::thread> th;
    std::atomic<unsigned> gen{0};
    std::atomic<int> done{0};
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    unsigned char *dst = nullptr;
    const unsigned char *src = nullptr;
    explicit Pool(int n) {
        for (int t = 0; t < n; ++t)
            th.emplace_back([this] {
                unsigned seen = 0;
                for (;;) {
                    unsigned g;
                    while ((g = gen.load(std::memory_order_acquire)) == seen) {
                        if (stop.load()) return;
                    }
                    seen = g;
                    for (size_t i; (i = next.fetch_add(1)) * kPiece < kFill;)
                        std::memcpy(dst + i * kPiece, src + i * kPiece, kPiece);
                    done.fetch_add(1, std::memory_order_release);
                }
            });
    }
    double fill(unsigned char *d, const unsigned char *s) { // seconds
        dst = d;
        src = s;
        next = 0;
        done = 0;
        auto t0 = Clock::now();
        gen.fetch_add(1, std::memory_order_release);
        while (done.load(std::memory_order_acquire) < int(th.size())) {}
        return std::chrono::duration<double>(Clock::now() - t0).count();
    }
    ~Pool() {
        stop = true;
        for (auto &t : th) t.join();
    }
};

unsigned char *pages(size_t bytes, bool huge) {
    void *p = nullptr;
    if (posix_memalign(&p, 2u << 20, bytes) != 0) std::exit(1);
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    std::memset(p, 1, bytes);
    return static_cast<unsigned char *>(p);
}

double med(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    const int threads = 15;
    unsigned char *src4k = pages(kFill, false), *srcHuge = pages(kFill, true);
    unsigned char *dstAlloc = nullptr, *bg = nullptr, *dstHuge = pages(kFill, true), *dst4k = pages(kFill, false);
    CK(cudaHostAlloc((void **)&dstAlloc, kFill, cudaHostAllocDefault));
    CK(cudaHostRegister(dstHuge, kFill, cudaHostRegisterDefault));
    CK(cudaHostRegister(dst4k, kFill, cudaHostRegisterDefault));
    CK(cudaHostAlloc((void **)&bg, kBg, cudaHostAllocDefault));
    std::memset(dstAlloc, 2, kFill);
    std::memset(bg, 3, kBg);
    void *dev = nullptr;
    CK(cudaMalloc(&dev, kBg));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    Pool pool(threads);
    // Huge pages this process holds (128 MiB if both MADV_HUGEPAGE buffers got them). Read here,
    // not through a shell: /proc/self of a child would be the child's.
    {
        std::ifstream rollup("/proc/self/smaps_rollup");
        for (std::string line; std::getline(rollup, line);)
            if (line.rfind("AnonHugePages:", 0) == 0) std::printf("after setup, this process's %s\n", line.c_str());
    }

    struct Variant {
        const char *name;
        unsigned char *src, *dst;
    } vs[] = {{"src 4KiB -> cudaHostAlloc", src4k, dstAlloc},
              {"src THP  -> cudaHostAlloc", srcHuge, dstAlloc},
              {"src 4KiB -> THP registered", src4k, dstHuge},
              {"src THP  -> THP registered", srcHuge, dstHuge},
              {"src 4KiB -> 4KiB registered", src4k, dst4k}};
    const int nv = sizeof vs / sizeof vs[0];
    std::vector<double> alone[nv], during[nv], bgRate[nv], linkAlone, linkFill;
    for (int w = 0; w < 2; ++w) pool.fill(dstAlloc, src4k); // warm
    for (int r = 0; r < 11; ++r) {
        // The link alone: 64 MiB from the freshly filled cudaHostAlloc buffer, and 256 MiB cold.
        pool.fill(dstAlloc, src4k);
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(dev, dstAlloc, kFill, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        linkFill.push_back(kFill / (ms * 1e-3) / 1e9);
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(dev, bg, kBg, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        linkAlone.push_back(kBg / (ms * 1e-3) / 1e9);
        for (int v = 0; v < nv; ++v) {
            alone[v].push_back(kFill / pool.fill(vs[v].dst, vs[v].src) / 1e9);
            // The same fill while the DMA reads 256 MiB (~4.9 ms at 55 GB/s, the fill ~1.2-1.6 ms):
            // started once the DMA is running.
            CK(cudaEventRecord(e0, s));
            CK(cudaMemcpyAsync(dev, bg, kBg, cudaMemcpyHostToDevice, s));
            CK(cudaEventRecord(e1, s));
            while (cudaEventQuery(e0) != cudaSuccess) {}
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            const double t = pool.fill(vs[v].dst, vs[v].src);
            const bool inside = cudaEventQuery(e1) == cudaErrorNotReady;
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms, e0, e1));
            during[v].push_back(inside ? kFill / t / 1e9 : -1);
            bgRate[v].push_back(kBg / (ms * 1e-3) / 1e9);
        }
    }
    std::printf("link alone: 256 MiB cold %.1f GB/s; 64 MiB just filled %.1f GB/s (medians of 11)\n", med(linkAlone),
                med(linkFill));
    for (int v = 0; v < nv; ++v)
        std::printf(
            "%-28s fill alone %5.1f GB/s | fill during the DMA %5.1f GB/s (min %5.1f) | the 256 MiB DMA %5.1f GB/s\n",
            vs[v].name, med(alone[v]), med(during[v]), *std::min_element(during[v].begin(), during[v].end()),
            med(bgRate[v]));
    std::printf("(fill during the DMA -1: the fill outlasted the DMA in that repeat)\n");
    CK(cudaHostUnregister(dstHuge));
    CK(cudaHostUnregister(dst4k));
    return 0;
}

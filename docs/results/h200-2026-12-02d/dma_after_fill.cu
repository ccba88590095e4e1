// How fast the link reads memory the cores have just written, by where the fill left its lines
// (docs/performance.md): 15 persistent threads fill 64 MiB of cudaHostAlloc memory
// from pageable memory in 512 KiB pieces; each thread then runs, over the lines of its piece,
// nothing / cldemote (to the shared cache) / clwb (written back, kept clean) / clflushopt (written
// back and evicted), or fills with non-temporal stores; then one cudaMemcpyAsync moves the 64 MiB
// to the device, timed with events. Also the link reading memory written long before. Alternating,
// medians of 11. Build (no device needed):
//   nvcc -O2 -std=c++17 -Xcompiler -mcldemote,-mclwb,-mclflushopt -o dma_after_fill dma_after_fill.cu
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr size_t kBytes = 64u << 20, kPiece = 512u << 10, kLine = 64;
enum Mode { none, demote, writeback, flush, nontemporal, kModes };
const char *kNames[] = {"memcpy", "memcpy + cldemote", "memcpy + clwb", "memcpy + clflushopt", "non-temporal stores"};

void after(Mode m, unsigned char *p, size_t n) {
    for (size_t o = 0; o < n; o += kLine) {
        if (m == demote) _cldemote(p + o);
        if (m == writeback) _mm_clwb(p + o);
        if (m == flush) _mm_clflushopt(p + o);
    }
    if (m == writeback || m == flush) _mm_sfence();
}

void stream_copy(unsigned char *d, const unsigned char *s, size_t n) {
    for (size_t o = 0; o < n; o += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + o));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + o + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + o + 32));
        const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + o + 48));
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + o), a);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + o + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + o + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i *>(d + o + 48), e);
    }
    _mm_sfence();
}

struct Pool {
    std::vector<std::thread> th;
    std::atomic<unsigned> gen{0};
    std::atomic<int> done{0};
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    unsigned char *dst = nullptr;
    const unsigned char *src = nullptr;
    Mode mode = none;
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
                    for (size_t i; (i = next.fetch_add(1)) * kPiece < kBytes;) {
                        if (mode == nontemporal) {
                            stream_copy(dst + i * kPiece, src + i * kPiece, kPiece);
                        } else {
                            std::memcpy(dst + i * kPiece, src + i * kPiece, kPiece);
                            after(mode, dst + i * kPiece, kPiece);
                        }
                    }
                    done.fetch_add(1, std::memory_order_release);
                }
            });
    }
    double fill(unsigned char *d, const unsigned char *s, Mode m) {
        dst = d;
        src = s;
        mode = m;
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

double med(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    unsigned char *src = static_cast<unsigned char *>(std::aligned_alloc(4096, kBytes));
    std::memset(src, 1, kBytes);
    unsigned char *dst = nullptr, *cold = nullptr;
    CK(cudaHostAlloc((void **)&dst, kBytes, cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&cold, kBytes, cudaHostAllocDefault));
    std::memset(dst, 2, kBytes);
    std::memset(cold, 3, kBytes);
    void *dev = nullptr;
    CK(cudaMalloc(&dev, kBytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    Pool pool(15);
    auto dma = [&](const unsigned char *from) {
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(dev, from, kBytes, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        return kBytes / (ms * 1e-3) / 1e9;
    };
    std::vector<double> fill[kModes], link[kModes], linkCold;
    for (int r = 0; r < 13; ++r) {
        for (int m = 0; m < kModes; ++m) {
            const double t = pool.fill(dst, src, Mode(m));
            const double gbs = dma(dst);
            if (r >= 2) {
                fill[m].push_back(kBytes / t / 1e9);
                link[m].push_back(gbs);
            }
        }
        // Evict `cold` from the caches (other memory has been written since its memset), then read it.
        const double gbs = dma(cold);
        if (r >= 2) linkCold.push_back(gbs);
    }
    std::printf("the link reading 64 MiB written long before: %.1f GB/s (medians of 11)\n", med(linkCold));
    for (int m = 0; m < kModes; ++m)
        std::printf("%-22s fill %5.1f GB/s | then the link reads it at %5.1f GB/s (min %5.1f, max %5.1f)\n", kNames[m],
                    med(fill[m]), med(link[m]), *std::min_element(link[m].begin(), link[m].end()),
                    *std::max_element(link[m].begin(), link[m].end()));
    return 0;
}

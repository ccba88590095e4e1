// The host copy rates behind host-copy-micro.txt: 1, 4, 8, 15 threads; memcpy against dma_staging_copy
// (non-temporal stores); a contiguous 64 MiB copy in 512 KiB pieces ("fill") and 4096 random 4 KiB
// pieces of a 32 MiB region ("gather"); alternating, medians of 11. Build: g++ -O2 -std=c++17 -pthread
// -I backends/cuda_common/src host_copy_micro.cpp backends/cuda_common/src/dma_staging_copy.cpp
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "dma_staging_copy.hpp" // backends/cuda_common/src
using Clock = std::chrono::steady_clock;
int main() {
    const size_t N = 64u << 20, piece = 512u << 10;
    unsigned char *src = (unsigned char *)aligned_alloc(4096, N), *dst = (unsigned char *)aligned_alloc(4096, N);
    memset(src, 1, N);
    memset(dst, 2, N);
    for (int T : {1, 4, 8, 15}) {
        std::vector<double> a, b;
        for (int r = 0; r < 11; ++r) {
            for (int nt = 0; nt < 2; ++nt) {
                std::atomic<size_t> next{0};
                auto t0 = Clock::now();
                std::vector<std::thread> th;
                for (int t = 0; t < T; ++t)
                    th.emplace_back([&] {
                        for (size_t i; (i = next.fetch_add(1)) * piece < N;) {
                            if (nt)
                                xfer::cuda::dma_staging_copy(dst + i * piece, src + i * piece, piece);
                            else
                                memcpy(dst + i * piece, src + i * piece, piece);
                        }
                        if (nt) xfer::cuda::dma_staging_fence();
                    });
                for (auto &x : th) x.join();
                double s = std::chrono::duration<double>(Clock::now() - t0).count();
                (nt ? b : a).push_back(N / s / 1e9);
            }
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        printf("fill   threads %2d  memcpy %6.1f GB/s  nontemporal %6.1f GB/s\n", T, a[5], b[5]);
    }
    // gather: 4096 x 4 KiB from random slots of a 32 MiB region into 16 MiB, pool-less threads
    std::vector<size_t> slots(8192);
    for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
    srand(1);
    for (size_t i = slots.size() - 1; i > 0; --i) std::swap(slots[i], slots[rand() % (i + 1)]);
    unsigned char *region = (unsigned char *)aligned_alloc(4096, 32u << 20);
    memset(region, 3, 32u << 20);
    for (int T : {1, 4, 8, 15}) {
        std::vector<double> a, b;
        for (int r = 0; r < 11; ++r) {
            for (int nt = 0; nt < 2; ++nt) {
                std::vector<std::thread> th;
                std::atomic<int> ready{0};
                std::atomic<bool> go{false};
                std::atomic<int> done{0};
                Clock::time_point t0;
                for (int t = 0; t < T; ++t)
                    th.emplace_back([&, t] {
                        ready++;
                        while (!go.load()) {}
                        for (size_t k = 4096 * t / T; k < 4096 * (t + 1) / T; ++k) {
                            if (nt)
                                xfer::cuda::dma_staging_copy(dst + k * 4096, region + slots[k] * 4096, 4096);
                            else
                                memcpy(dst + k * 4096, region + slots[k] * 4096, 4096);
                        }
                        if (nt) xfer::cuda::dma_staging_fence();
                        done++;
                    });
                while (ready.load() < T) {}
                t0 = Clock::now();
                go = true;
                while (done.load() < T) {}
                double s = std::chrono::duration<double>(Clock::now() - t0).count();
                for (auto &x : th) x.join();
                (nt ? b : a).push_back((16u << 20) / s / 1e9);
            }
        }
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        printf("gather threads %2d  memcpy %6.1f GB/s  nontemporal %6.1f GB/s\n", T, a[5], b[5]);
    }
}

// Host time of the calls a staged copy queues per chunk (docs/performance.md):
// cuStreamBatchMemOp with the pipeline's two flag operations (a write and a wait) against
// cuStreamWriteValue32 + cuStreamWaitValue32, one cuStreamBatchMemOp of one operation, and
// cudaMemcpyAsync of 4 KiB and 8 MiB from page-locked memory. The waits are already met (the
// stream never stalls). 200 calls per sample between synchronisations, 25 samples, alternating;
// medians, microseconds per call. Build (no device needed): nvcc -O2 -std=c++17 -o memop_cost memop_cost.cu
//   -L/usr/local/cuda/lib64/stubs -lcuda
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

using Clock = std::chrono::steady_clock;
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        auto e_ = (x);                                                                                                 \
        if (e_ != 0) {                                                                                                 \
            std::fprintf(stderr, "%s failed: %d\n", #x, int(e_));                                                      \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

int main() {
    CK(cudaSetDevice(0));
    CK(cudaFree(nullptr));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned *word = nullptr;
    CK(cudaHostAlloc((void **)&word, 64, cudaHostAllocMapped));
    word[0] = 0;
    word[1] = 1000000;
    void *dword = nullptr;
    CK(cudaHostGetDevicePointer(&dword, word, 0));
    const CUdeviceptr wr = reinterpret_cast<CUdeviceptr>(dword), wt = wr + 4;
    const size_t big = 8u << 20;
    unsigned char *pin = nullptr;
    void *dev = nullptr;
    CK(cudaHostAlloc((void **)&pin, big, cudaHostAllocDefault));
    CK(cudaMalloc(&dev, big));
    const int per = 200, samples = 25;
    const char *names[] = {"batch(write,wait)", "write32+wait32", "batch(wait)", "memcpy 4KiB H2D", "memcpy 8MiB H2D"};
    std::vector<double> t[5];
    unsigned v = 1;
    for (int r = 0; r < samples + 2; ++r) {
        for (int k = 0; k < 5; ++k) {
            CK(cudaStreamSynchronize(s));
            auto t0 = Clock::now();
            for (int i = 0; i < per; ++i, ++v) {
                if (k == 0) {
                    CUstreamBatchMemOpParams p[2] = {};
                    p[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
                    p[0].writeValue.address = wr;
                    p[0].writeValue.value = v;
                    p[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
                    p[1].waitValue.address = wt;
                    p[1].waitValue.value = 1;
                    p[1].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
                    CK(cuStreamBatchMemOp(s, 2, p, 0));
                } else if (k == 1) {
                    CK(cuStreamWriteValue32(s, wr, v, CU_STREAM_WRITE_VALUE_DEFAULT));
                    CK(cuStreamWaitValue32(s, wt, 1, CU_STREAM_WAIT_VALUE_GEQ));
                } else if (k == 2) {
                    CUstreamBatchMemOpParams p[1] = {};
                    p[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
                    p[0].waitValue.address = wt;
                    p[0].waitValue.value = 1;
                    p[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
                    CK(cuStreamBatchMemOp(s, 1, p, 0));
                } else {
                    CK(cudaMemcpyAsync(dev, pin, k == 3 ? 4096 : big, cudaMemcpyHostToDevice, s));
                }
            }
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / per;
            if (r >= 2) t[k].push_back(us);
        }
    }
    CK(cudaStreamSynchronize(s));
    for (int k = 0; k < 5; ++k) {
        std::sort(t[k].begin(), t[k].end());
        std::printf("%-20s %6.2f us per call (min %5.2f, max %5.2f)\n", names[k], t[k][t[k].size() / 2], t[k].front(),
                    t[k].back());
    }
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
// The probe behind probe-call-overhead.txt: where a 4-byte xfer_memcpy_async's host time goes, in one
// process. Build against a gpu-carry tree: g++ -O2 -std=c++17 probe_call_overhead.cpp -I api/include
// -I /usr/local/cuda/include -L build-gpu/lib -lxfer -l:libcudart.so.13; run: probe BACKEND.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <xfer/xfer.h>
using Clock = std::chrono::steady_clock;
static cudaStream_t g_sync_stream;
static xfer_stream g_xs;
// 256 calls a batch, the stream drained between batches; median over 41 batches.
double per_call(const std::function<void()> &call, const std::function<void()> &drain) {
    std::vector<double> r;
    for (int rep = 0; rep < 41; ++rep) {
        auto t0 = Clock::now();
        for (int i = 0; i < 256; ++i) call();
        r.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / 256);
        drain();
    }
    std::sort(r.begin(), r.end());
    return r[r.size() / 2];
}
int main(int argc, char **argv) {
    const char *backend = argc > 1 ? argv[1] : "pinned";
    xfer_context ctx;
    xfer_stream xs;
    if (xfer_open(backend, 0, &ctx)) {
        printf("open %s: %s\n", backend, xfer_last_error());
        return 1;
    }
    xfer_stream_create(ctx, &xs);
    cudaStream_t cs = static_cast<cudaStream_t>(xfer_stream_native(xs));
    xfer_buffer a, c;
    xfer_alloc(ctx, 65536, XFER_ALLOC_DEFAULT, &a);
    xfer_alloc(ctx, 65536, XFER_ALLOC_DEFAULT, &c);
    void *h = xfer_host_ptr(a), *d = xfer_device_ptr(c);
    cudaStream_t rs;
    cudaStreamCreateWithFlags(&rs, cudaStreamNonBlocking);
    auto drain_raw = [&] { cudaStreamSynchronize(rs); };
    auto drain_x = [&] { xfer_stream_synchronize(xs); };
    auto none = [] {};
    CUresult (*getcur)(CUcontext *) = nullptr;
    cudaDriverEntryPointQueryResult q;
    cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&getcur, 4000, cudaEnableDefault, &q);
    CUcontext cur;
    int dev;
    cudaPointerAttributes at;
    for (int round = 0; round < 3; ++round) {
        printf("[%s round %d]\n", backend, round);
        printf("  raw H2D explicit          %7.1f ns\n",
               per_call([&] { cudaMemcpyAsync(d, h, 4, cudaMemcpyHostToDevice, rs); }, drain_raw));
        printf("  raw H2D default           %7.1f ns\n",
               per_call([&] { cudaMemcpyAsync(d, h, 4, cudaMemcpyDefault, rs); }, drain_raw));
        printf("  xfer H2D                  %7.1f ns\n",
               per_call([&] { xfer_memcpy_async(ctx, d, h, 4, XFER_COPY_HOST_TO_DEVICE, xs); }, drain_x));
        printf("  xfer H2D kind DEFAULT     %7.1f ns\n",
               per_call([&] { xfer_memcpy_async(ctx, d, h, 4, XFER_COPY_DEFAULT, xs); }, drain_x));
        printf("  raw D2H explicit          %7.1f ns\n",
               per_call([&] { cudaMemcpyAsync(h, d, 4, cudaMemcpyDeviceToHost, rs); }, drain_raw));
        printf("  xfer D2H                  %7.1f ns\n",
               per_call([&] { xfer_memcpy_async(ctx, h, d, 4, XFER_COPY_DEVICE_TO_HOST, xs); }, drain_x));
        printf("  cudaSetDevice(0)          %7.1f ns\n", per_call([&] { cudaSetDevice(0); }, none));
        printf("  cudaGetDevice             %7.1f ns\n", per_call([&] { cudaGetDevice(&dev); }, none));
        printf("  cuCtxGetCurrent           %7.1f ns\n", per_call([&] { getcur(&cur); }, none));
        printf("  cudaPointerGetAttributes  %7.1f ns\n", per_call([&] { cudaPointerGetAttributes(&at, d); }, none));
        printf("  xfer_stream_query         %7.1f ns\n", per_call([&] { xfer_stream_query(xs); }, none));
        printf("  cudaStreamQuery           %7.1f ns\n", per_call([&] { cudaStreamQuery(cs); }, none));
    }
    return 0;
}

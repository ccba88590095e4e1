// SPDX-License-Identifier: Apache-2.0
// The program behind core-micro.txt: the core's building blocks and the core alone (the mock plugin
// of tests/core, which copies with memmove) on one host. Build against a gpu-carry tree:
// g++ -O2 -std=c++17 core_micro.cpp -I api/include -L build-gpu/lib -lxfer -ldl (and libtlslib.so from
// 'thread_local long t; extern "C" long *tls_addr() { return &t; }'); run with XFER_PLUGIN_PATH set to
// build-gpu/test-plugins/good (absolute).
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <xfer/xfer.h>
using Clock = std::chrono::steady_clock;
template <class F>
double ns(F f, long n = 20000000) {
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        auto t0 = Clock::now();
        for (long i = 0; i < n; ++i) f();
        double v = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / n;
        if (v < best) best = v;
    }
    return best;
}
std::atomic<long> a{0};
int main() {
    std::mutex m;
    std::shared_mutex sm;
    auto sp = std::make_shared<int>(1);
    printf("atomic fetch_add        %6.2f ns\n", ns([] { a.fetch_add(1, std::memory_order_acq_rel); }));
    printf("mutex lock+unlock       %6.2f ns\n", ns([&] {
               m.lock();
               m.unlock();
           }));
    printf("shared_mutex rd lk+unlk %6.2f ns\n", ns([&] {
               sm.lock_shared();
               sm.unlock_shared();
           }));
    printf("shared_ptr copy+drop    %6.2f ns\n", ns([&] {
               auto c = sp;
               asm volatile("" ::"r"(c.get()));
           }));
    void *h = dlopen("./exp2/libtlslib.so", RTLD_NOW);
    auto f = h ? (long *(*)())dlsym(h, "tls_addr") : nullptr;
    if (f) printf("dlopen'd TLS access     %6.2f ns\n", ns([&] { ++*f(); }));
    xfer_context ctx;
    xfer_stream s;
    if (xfer_open("mockfull", 0, &ctx) == XFER_SUCCESS && xfer_stream_create(ctx, &s) == XFER_SUCCESS) {
        static char x[64], y[64];
        printf("core: xfer_memcpy_async (mock) %6.2f ns\n",
               ns([&] { xfer_memcpy_async(ctx, y, x, 4, XFER_COPY_HOST_TO_DEVICE, s); }, 2000000));
        printf("core: xfer_stream_query (mock) %6.2f ns\n", ns([&] { xfer_stream_query(s); }, 2000000));
    } else
        printf("mockfull: %s\n", xfer_last_error());
    return 0;
}

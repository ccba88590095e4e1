// SPDX-License-Identifier: Apache-2.0
// xfer inside the application's program, on every CUDA backend: its own streams wrapped
// (xfer_stream_wrap) carry xfer's copies in stream order with its kernels; every call leaves the
// calling thread's current context as it was; a copy queued while the application captures its
// stream into a CUDA graph is either captured correctly (the replay moves the bytes) or refused
// before the stream is touched (the capture stays valid).
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <cuda.h>

#include "gpu_fixture.hpp"
#include "kernels.hpp"
#include "xfer_cuda/driver_entry.hpp"

namespace {

using namespace xfer::test;
using xfer::cuda::driver_entry;

class GpuJoin : public GpuBackendTest {
  protected:
    // A 16 MiB or larger copy goes through the pageable backend's staging engine; 1 MiB straight
    // to the driver: both paths are exercised.
    static constexpr std::size_t kSizes[] = {std::size_t{1} << 20, std::size_t{48} << 20};
};

// ------------------------------------------------------------------ wrapped streams

TEST_P(GpuJoin, WrappedStreamOrdersCopiesWithTheApplicationsKernels) {
    cudaStream_t app = nullptr;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
    xfer_stream wrapped = nullptr;
    ASSERT_XFER_OK(xfer_stream_wrap(ctx_, app, &wrapped));
    EXPECT_EQ(native(wrapped), app);
    for (std::size_t n : kSizes) {
        SCOPED_TRACE(n);
        const auto data = random_bytes(n, fresh_seed());
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
        std::memcpy(xfer_host_ptr(buf), data.data(), n);
        // xfer's copy, the application's kernel (which spins first, so a copy overtaking it
        // would return unchanged bytes), xfer's copy back: one stream, no host wait between.
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, wrapped));
        ASSERT_EQ(cudaSuccess, launch_spin_then_xor(xfer_device_ptr(buf), n, 0x3C, 20, app));
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, wrapped));
        ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(app)); // the application's own wait suffices
        EXPECT_XFER_OK(xfer_stream_synchronize(wrapped));
        EXPECT_EQ(0, std::memcmp(xored(data, 0x3C).data(), xfer_host_ptr(buf), n));
        EXPECT_XFER_OK(xfer_free(buf));
    }
    ASSERT_XFER_OK(xfer_stream_destroy(wrapped));
    // The stream is still the application's: usable, and destroyed by it.
    EXPECT_EQ(cudaSuccess, cudaStreamQuery(app));
    EXPECT_EQ(cudaSuccess, cudaStreamDestroy(app));
}

TEST_P(GpuJoin, NativeEventOrdersTheApplicationsStreamAfterXfersCopy) {
    cudaStream_t app = nullptr;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
    const std::size_t n = 8u << 20;
    const auto data = random_bytes(n, fresh_seed());
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::memcpy(xfer_host_ptr(buf), data.data(), n);
    xfer_event copied = nullptr;
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DISABLE_TIMING, &copied));
    // 20 ms of device time first (a xor with 0 changes nothing): the application's kernel would
    // see unchanged bytes if it did not wait for the event.
    ASSERT_EQ(cudaSuccess, launch_spin_then_xor(xfer_device_ptr(buf), 1, 0, 20, native(stream_)));
    ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
    ASSERT_XFER_OK(xfer_event_record(copied, stream_));
    auto *event = static_cast<cudaEvent_t>(xfer_event_native(copied));
    ASSERT_NE(event, nullptr) << xfer_last_error();
    ASSERT_EQ(cudaSuccess, cudaStreamWaitEvent(app, event, 0));
    ASSERT_EQ(cudaSuccess, launch_xor(xfer_device_ptr(buf), n, 0xA5, app));
    ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(app));
    std::vector<unsigned char> back(n);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(xored(data, 0xA5), back);
    EXPECT_XFER_OK(xfer_event_destroy(copied));
    EXPECT_XFER_OK(xfer_free(buf));
    EXPECT_EQ(cudaSuccess, cudaStreamDestroy(app));
}

TEST_P(GpuJoin, DefaultStreamsCanBeWrapped) {
    for (cudaStream_t s : {cudaStreamLegacy, cudaStreamPerThread}) {
        xfer_stream wrapped = nullptr;
        ASSERT_XFER_OK(xfer_stream_wrap(ctx_, s, &wrapped));
        EXPECT_EQ(native(wrapped), s);
        const std::size_t n = 2u << 20;
        const auto data = random_bytes(n, fresh_seed());
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
        std::memcpy(xfer_host_ptr(buf), data.data(), n);
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, wrapped));
        ASSERT_EQ(cudaSuccess, launch_xor(xfer_device_ptr(buf), n, 0x11, s));
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, wrapped));
        ASSERT_XFER_OK(xfer_stream_synchronize(wrapped));
        EXPECT_EQ(0, std::memcmp(xored(data, 0x11).data(), xfer_host_ptr(buf), n));
        EXPECT_XFER_OK(xfer_free(buf));
        EXPECT_XFER_OK(xfer_stream_destroy(wrapped));
    }
}

// ------------------------------------------------------------- the caller's binding

using CtxGetCurrent = CUresult(CUDAAPI *)(CUcontext *);
using CtxSetCurrent = CUresult(CUDAAPI *)(CUcontext);
using CtxCreate = CUresult(CUDAAPI *)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);
using CtxDestroy = CUresult(CUDAAPI *)(CUcontext);

CUcontext current_context() {
    static const auto get = driver_entry<CtxGetCurrent>("cuCtxGetCurrent", 4000);
    CUcontext c = nullptr;
    EXPECT_NE(get, nullptr);
    if (get != nullptr) EXPECT_EQ(CUDA_SUCCESS, get(&c));
    return c;
}

// Runs every kind of public call a program makes, checking after each one that the thread's
// current context is still `expected`.
void every_call_keeps(const std::string &backend, CUcontext expected) {
    int step = 0;
    auto same = [&](const char *what) {
        ++step;
        EXPECT_EQ(current_context(), expected) << "after " << what << " (step " << step << ")";
    };
    xfer_context ctx = nullptr;
    ASSERT_XFER_OK(xfer_open(backend.c_str(), 0, &ctx));
    same("xfer_open");
    xfer_device_info info{};
    EXPECT_XFER_OK(xfer_device_get_info(ctx, &info));
    same("xfer_device_get_info");
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx, &s));
    same("xfer_stream_create");
    xfer_event a = nullptr, b = nullptr;
    ASSERT_XFER_OK(xfer_event_create(ctx, XFER_EVENT_DEFAULT, &a));
    ASSERT_XFER_OK(xfer_event_create(ctx, XFER_EVENT_DEFAULT, &b));
    same("xfer_event_create");
    for (std::size_t n : {std::size_t{1} << 20, std::size_t{48} << 20}) {
        const auto data = random_bytes(n, fresh_seed());
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx, n, XFER_ALLOC_DEFAULT, &buf));
        same("xfer_alloc");
        std::memcpy(xfer_host_ptr(buf), data.data(), n);
        EXPECT_XFER_OK(xfer_event_record(a, s));
        same("xfer_event_record");
        EXPECT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, s));
        same("xfer_copy_async to the device");
        EXPECT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, s));
        same("xfer_copy_async to the host");
        std::vector<unsigned char> user(n);
        EXPECT_XFER_OK(xfer_memcpy_async(ctx, user.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, s));
        same("xfer_memcpy_async to pageable memory");
        EXPECT_XFER_OK(xfer_memcpy_async(ctx, xfer_device_ptr(buf), user.data(), n, XFER_COPY_HOST_TO_DEVICE, s));
        same("xfer_memcpy_async from pageable memory");
        void *dsts[2] = {user.data(), user.data() + 4096};
        const void *srcs[2] = {xfer_device_ptr(buf), static_cast<unsigned char *>(xfer_device_ptr(buf)) + 4096};
        const std::size_t sizes[2] = {4096, 4096};
        EXPECT_XFER_OK(xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 2, XFER_COPY_DEVICE_TO_HOST, s));
        same("xfer_memcpy_batch_async");
        EXPECT_XFER_OK(xfer_event_record(b, s));
        const xfer_status queried = xfer_stream_query(s);
        EXPECT_TRUE(queried == XFER_SUCCESS || queried == XFER_ERROR_NOT_READY) << xfer_status_string(queried);
        same("xfer_stream_query");
        EXPECT_XFER_OK(xfer_event_synchronize(b));
        same("xfer_event_synchronize");
        float ms = 0;
        EXPECT_XFER_OK(xfer_event_elapsed_ms(a, b, &ms));
        same("xfer_event_elapsed_ms");
        EXPECT_XFER_OK(xfer_stream_synchronize(s));
        same("xfer_stream_synchronize");
        EXPECT_EQ(0, std::memcmp(data.data(), user.data(), n));
        EXPECT_XFER_OK(xfer_register(ctx, user.data(), n, XFER_REGISTER_DEFAULT));
        same("xfer_register");
        EXPECT_XFER_OK(xfer_memcpy_async(ctx, user.data(), xfer_device_ptr(buf), n, XFER_COPY_DEVICE_TO_HOST, s));
        same("xfer_memcpy_async to registered memory");
        EXPECT_XFER_OK(xfer_unregister(ctx, user.data()));
        same("xfer_unregister");
        EXPECT_XFER_OK(xfer_copy(buf, XFER_TO_HOST, 0, n));
        same("xfer_copy");
        EXPECT_XFER_OK(xfer_free(buf));
        same("xfer_free");
    }
    // A failing call gives the binding back too.
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_memcpy_async(ctx, nullptr, nullptr, 1, XFER_COPY_DEFAULT, s));
    same("a refused xfer_memcpy_async");
    EXPECT_XFER_OK(xfer_event_destroy(a));
    EXPECT_XFER_OK(xfer_event_destroy(b));
    same("xfer_event_destroy");
    EXPECT_XFER_OK(xfer_stream_destroy(s));
    same("xfer_stream_destroy");
    EXPECT_XFER_OK(xfer_close(ctx));
    same("xfer_close");
}

// Runs `body` on a new thread (one that has never made a CUDA call).
void on_fresh_thread(const std::function<void()> &body) {
    std::thread t(body);
    t.join();
}

TEST_P(GpuJoin, EveryCallLeavesAThreadWithoutAContextWithout) {
    on_fresh_thread([&] {
        ASSERT_EQ(current_context(), nullptr);
        every_call_keeps(GetParam(), nullptr);
        int device = -1;
        EXPECT_EQ(cudaSuccess, cudaGetDevice(&device));
        EXPECT_EQ(device, 0);
    });
}

TEST_P(GpuJoin, EveryCallLeavesTheApplicationsOwnContextCurrent) {
    on_fresh_thread([&] {
        const auto create = driver_entry<CtxCreate>("cuCtxCreate", 13000);
        const auto destroy = driver_entry<CtxDestroy>("cuCtxDestroy", 4000);
        ASSERT_NE(create, nullptr);
        ASSERT_NE(destroy, nullptr);
        CUcontext mine = nullptr;
        ASSERT_EQ(CUDA_SUCCESS, create(&mine, nullptr, 0, 0)); // made current by its creation
        ASSERT_EQ(current_context(), mine);
        every_call_keeps(GetParam(), mine);
        EXPECT_EQ(CUDA_SUCCESS, destroy(mine));
    });
}

TEST_P(GpuJoin, EveryCallLeavesThePrimaryContextCurrentWhereItWas) {
    on_fresh_thread([&] {
        ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
        ASSERT_EQ(cudaSuccess, cudaFree(nullptr));
        const CUcontext primary = current_context();
        ASSERT_NE(primary, nullptr);
        every_call_keeps(GetParam(), primary);
    });
}

// ------------------------------------------------------------------ graph capture

// Captures `queue` (xfer calls on the wrapped capturing stream, returning the first failure)
// followed by a kernel, and checks the contract: a successful capture replays correctly (the
// bytes `expect` returns after `refill` changed the sources), a refusal leaves the capture
// valid and names the reason.
struct CaptureResult {
    xfer_status queued = XFER_SUCCESS;
    std::string message;
    cudaError_t ended = cudaSuccess;
    cudaGraph_t graph = nullptr;
};

CaptureResult capture(cudaStream_t app, const std::function<xfer_status()> &queue) {
    CaptureResult r;
    EXPECT_EQ(cudaSuccess, cudaStreamBeginCapture(app, cudaStreamCaptureModeGlobal));
    r.queued = queue();
    if (r.queued != XFER_SUCCESS) r.message = xfer_last_error();
    r.ended = cudaStreamEndCapture(app, &r.graph);
    (void)cudaGetLastError();
    return r;
}

void replay(cudaGraph_t graph, cudaStream_t app) {
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaSuccess, cudaGraphInstantiate(&exec, graph, 0));
    ASSERT_EQ(cudaSuccess, cudaGraphLaunch(exec, app));
    ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(app));
    EXPECT_EQ(cudaSuccess, cudaGraphExecDestroy(exec));
}

TEST_P(GpuJoin, BufferCopiesAreCapturedCorrectlyOrRefusedBeforeTheStreamIsTouched) {
    cudaStream_t app = nullptr;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
    xfer_stream wrapped = nullptr;
    ASSERT_XFER_OK(xfer_stream_wrap(ctx_, app, &wrapped));
    for (std::size_t n : kSizes) {
        SCOPED_TRACE(n);
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
        std::memset(xfer_host_ptr(buf), 0, n);
        CaptureResult r = capture(app, [&] {
            xfer_status st = xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, wrapped);
            if (st == XFER_SUCCESS && launch_xor(xfer_device_ptr(buf), n, 0x77, app) != cudaSuccess) {
                st = XFER_ERROR_INTERNAL;
            }
            if (st == XFER_SUCCESS) st = xfer_copy_async(buf, XFER_TO_HOST, 0, n, wrapped);
            return st;
        });
        ASSERT_EQ(cudaSuccess, r.ended) << "xfer invalidated the application's capture: "
                                        << xfer_status_string(r.queued) << " " << r.message;
        if (r.queued == XFER_SUCCESS) {
            // Captured: the replay moves what the host view holds at replay time.
            const auto data = random_bytes(n, fresh_seed());
            std::memcpy(xfer_host_ptr(buf), data.data(), n);
            replay(r.graph, app);
            EXPECT_EQ(0, std::memcmp(xored(data, 0x77).data(), xfer_host_ptr(buf), n))
                << GetParam() << ": captured, but the replay did not move the bytes";
        } else {
            EXPECT_EQ(r.queued, XFER_ERROR_NOT_SUPPORTED) << r.message;
            EXPECT_NE(r.message.find("captured"), std::string::npos) << r.message;
        }
        std::printf("[ capture  ] %s buffer copy of %zu bytes: %s\n", GetParam().c_str(), n,
                    r.queued == XFER_SUCCESS ? "captured, replay verified" : "refused, capture intact");
        if (r.graph != nullptr) EXPECT_EQ(cudaSuccess, cudaGraphDestroy(r.graph));
        EXPECT_XFER_OK(xfer_free(buf));
    }
    EXPECT_XFER_OK(xfer_stream_destroy(wrapped));
    EXPECT_EQ(cudaSuccess, cudaStreamDestroy(app));
}

TEST_P(GpuJoin, RawCopiesOfPageableMemoryAreRefusedAndOfRegisteredMemoryCaptured) {
    cudaStream_t app = nullptr;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
    xfer_stream wrapped = nullptr;
    ASSERT_XFER_OK(xfer_stream_wrap(ctx_, app, &wrapped));
    const std::size_t n = 4u << 20;
    xfer_buffer buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
    std::vector<unsigned char> user(n, 0);
    // Pageable: refused on every backend, the capture intact.
    CaptureResult r = capture(
        app, [&] { return xfer_memcpy_async(ctx_, xfer_device_ptr(buf), user.data(), n, XFER_COPY_DEFAULT, wrapped); });
    EXPECT_EQ(cudaSuccess, r.ended) << r.message;
    EXPECT_EQ(r.queued, XFER_ERROR_NOT_SUPPORTED) << r.message;
    EXPECT_NE(r.message.find("captured"), std::string::npos) << r.message;
    if (r.graph != nullptr) EXPECT_EQ(cudaSuccess, cudaGraphDestroy(r.graph));
    void *dsts[1] = {xfer_device_ptr(buf)};
    const void *srcs[1] = {user.data()};
    const std::size_t sizes[1] = {4096};
    r = capture(app, [&] { return xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 1, XFER_COPY_DEFAULT, wrapped); });
    EXPECT_EQ(cudaSuccess, r.ended) << r.message;
    EXPECT_EQ(r.queued, XFER_ERROR_NOT_SUPPORTED) << r.message;
    if (r.graph != nullptr) EXPECT_EQ(cudaSuccess, cudaGraphDestroy(r.graph));
    // Registered (page-locked): captured, and the replay reads the memory as it is then.
    ASSERT_XFER_OK(xfer_register(ctx_, user.data(), n, XFER_REGISTER_DEFAULT));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_register(ctx_, back.data(), n, XFER_REGISTER_DEFAULT));
    r = capture(app, [&] {
        xfer_status st = xfer_memcpy_async(ctx_, xfer_device_ptr(buf), user.data(), n, XFER_COPY_DEFAULT, wrapped);
        if (st == XFER_SUCCESS)
            st = xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(buf), n, XFER_COPY_DEFAULT, wrapped);
        return st;
    });
    ASSERT_EQ(cudaSuccess, r.ended) << r.message;
    ASSERT_XFER_OK(r.queued);
    const auto data = random_bytes(n, fresh_seed());
    std::memcpy(user.data(), data.data(), n);
    replay(r.graph, app);
    EXPECT_EQ(data, back);
    EXPECT_EQ(cudaSuccess, cudaGraphDestroy(r.graph));
    EXPECT_XFER_OK(xfer_unregister(ctx_, user.data()));
    EXPECT_XFER_OK(xfer_unregister(ctx_, back.data()));
    EXPECT_XFER_OK(xfer_free(buf));
    EXPECT_XFER_OK(xfer_stream_destroy(wrapped));
    EXPECT_EQ(cudaSuccess, cudaStreamDestroy(app));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuJoin, ::testing::ValuesIn(kCudaBackends), param_name);

} // namespace

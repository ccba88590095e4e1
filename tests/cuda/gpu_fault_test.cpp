// SPDX-License-Identifier: Apache-2.0
// Faults on the GPU, per CUDA backend, each in a child process of its own: a sticky
// CUDA error spoils its device for the rest of the process, and a hang must become a failure
// (alarm), not a stuck suite. The parent never touches CUDA before forking.
//   - a kernel that faults on a stream, a failing device-side assert: the synchronisation that
//     sees it returns XFER_ERROR_BACKEND with the CUDA message; every later call on a context of
//     that device returns XFER_ERROR_BACKEND_UNAVAILABLE naming the fault, without hanging;
//     the host backend keeps working in the same process; xfer_close returns.
//   - out of device memory: XFER_ERROR_OUT_OF_MEMORY with the CUDA message; the context goes on.
//   - after fork(): a child of a process that used a CUDA backend finds it unavailable.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "fault_kernels.hpp"
#include <xfer/xfer.h>

namespace {
// No calibration of the machine decides here: the faults are injected into the declared
// defaults' paths, and no child spends a second measuring (set before main, overwriting nothing).
const bool calibration_off_by_default = ::setenv("XFER_CALIBRATION", "off", 0) == 0;

constexpr int kNoGpu = 77;

// Exit codes of the child: 0 pass, kNoGpu skip, else the failing step (printed by the child).
#define STEP(cond)                                                                                                     \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "child: step failed at line %d: %s (last error: %s)\n", __LINE__, #cond,              \
                         xfer_last_error());                                                                           \
            std::fflush(stderr);                                                                                       \
            std::_Exit(1);                                                                                             \
        }                                                                                                              \
    } while (0)

template <class Body>
void in_child(Body &&body) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(120); // a hang is a failure
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) std::_Exit(kNoGpu);
        body();
        std::fflush(nullptr);
        std::_Exit(0);
    }
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        FAIL() << "child ended by signal " << WTERMSIG(status) << (WTERMSIG(status) == SIGALRM ? " (hang)" : "");
    const int code = WEXITSTATUS(status);
    if (code == kNoGpu) {
        if (std::getenv("XFER_REQUIRE_GPU") != nullptr) FAIL() << "no CUDA device (XFER_REQUIRE_GPU is set)";
        GTEST_SKIP() << "no CUDA device";
    }
    EXPECT_EQ(code, 0) << "see the child's message above";
}

bool contains(const char *text, const char *part) { return std::strstr(text, part) != nullptr; }

// Bytes survive a round trip through a fresh host-backend context: other backends keep working.
bool host_backend_works() {
    xfer_context ctx = nullptr;
    xfer_buffer b = nullptr;
    if (xfer_open("host", 0, &ctx) != XFER_SUCCESS || xfer_alloc(ctx, 4096, 0, &b) != XFER_SUCCESS) return false;
    std::memset(xfer_host_ptr(b), 0x3c, 4096);
    bool ok = xfer_copy(b, XFER_TO_DEVICE, 0, 4096) == XFER_SUCCESS &&
              std::memcmp(xfer_host_ptr(b), xfer_device_ptr(b), 4096) == 0;
    return xfer_close(ctx) == XFER_SUCCESS && ok;
}

// Host view -> device view -> host view, every byte compared. Where the two views are one
// memory (managed, zerocopy) the host view is not cleared in between: that would clear the
// device view too.
bool round_trip(xfer_context ctx, xfer_buffer b, std::size_t n, unsigned char seed) {
    xfer_context_info info{};
    if (xfer_context_get_info(ctx, &info) != XFER_SUCCESS) return false;
    const bool one_memory = (info.caps & XFER_CAP_SHARED_VIEW) != 0;
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
    std::vector<unsigned char> data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(seed + i * 13);
    std::memcpy(host, data.data(), n);
    if (xfer_copy(b, XFER_TO_DEVICE, 0, n) != XFER_SUCCESS) return false;
    if (!one_memory) std::memset(host, 0, n);
    if (xfer_copy(b, XFER_TO_HOST, 0, n) != XFER_SUCCESS) return false;
    return std::memcmp(host, data.data(), n) == 0;
}

void sticky_fault(const char *backend, cudaError_t (*launch)(cudaStream_t), const char *cuda_name) {
    xfer_context ctx = nullptr, second = nullptr;
    xfer_buffer b = nullptr;
    xfer_stream s = nullptr;
    STEP(xfer_open(backend, 0, &ctx) == XFER_SUCCESS);
    STEP(xfer_open(backend, 0, &second) == XFER_SUCCESS);
    STEP(xfer_alloc(ctx, 1 << 20, 0, &b) == XFER_SUCCESS);
    STEP(xfer_stream_create(ctx, &s) == XFER_SUCCESS);
    STEP(round_trip(ctx, b, 1 << 20, 1));
    STEP(launch(static_cast<cudaStream_t>(xfer_stream_native(s))) == cudaSuccess);
    const xfer_status seen = xfer_stream_synchronize(s);
    STEP(seen == XFER_ERROR_BACKEND);
    STEP(contains(xfer_last_error(), cuda_name));
    // From now on: one clear refusal, on this context and on another one of the same device.
    STEP(xfer_copy_async(b, XFER_TO_DEVICE, 0, 4096, s) == XFER_ERROR_BACKEND_UNAVAILABLE);
    STEP(contains(xfer_last_error(), "unusable") && contains(xfer_last_error(), cuda_name));
    xfer_buffer other = nullptr;
    STEP(xfer_alloc(second, 4096, 0, &other) == XFER_ERROR_BACKEND_UNAVAILABLE);
    STEP(xfer_stream_synchronize(s) == XFER_ERROR_BACKEND_UNAVAILABLE);
    STEP(host_backend_works());
    // Closing returns (the handles go, whatever CUDA says).
    (void)xfer_close(second);
    (void)xfer_close(ctx);
    STEP(xfer_stream_synchronize(s) == XFER_ERROR_INVALID_HANDLE);
}

class GpuFaults : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuFaults, KernelFaultIsReportedThenRefusedWithoutHang) {
    const std::string backend = GetParam();
    in_child([&] { sticky_fault(backend.c_str(), xfer::test::launch_illegal_write, "cudaErrorIllegalAddress"); });
}

TEST_P(GpuFaults, DeviceAssertIsReportedThenRefusedWithoutHang) {
    const std::string backend = GetParam();
    in_child([&] { sticky_fault(backend.c_str(), xfer::test::launch_failing_assert, "cudaErrorAssert"); });
}

TEST_P(GpuFaults, OutOfMemoryIsReportedAndTheContextGoesOn) {
    const std::string backend = GetParam();
    in_child([&] {
        xfer_context ctx = nullptr;
        xfer_buffer huge = nullptr, b = nullptr;
        STEP(xfer_open(backend.c_str(), 0, &ctx) == XFER_SUCCESS);
        STEP(xfer_alloc(ctx, std::size_t(1) << 50, 0, &huge) == XFER_ERROR_OUT_OF_MEMORY); // 1 PiB
        STEP(contains(xfer_last_error(), "cuda"));
        STEP(huge == nullptr);
        STEP(xfer_alloc(ctx, 1 << 20, 0, &b) == XFER_SUCCESS);
        STEP(round_trip(ctx, b, 1 << 20, 7));
        STEP(xfer_close(ctx) == XFER_SUCCESS);
    });
}

TEST_P(GpuFaults, ChildOfAProcessThatUsedCudaFindsTheBackendUnavailable) {
    const std::string backend = GetParam();
    in_child([&] {
        xfer_context ctx = nullptr;
        STEP(xfer_open(backend.c_str(), 0, &ctx) == XFER_SUCCESS);
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::alarm(60);
            xfer_context mine = nullptr;
            STEP(xfer_open(backend.c_str(), 0, &mine) == XFER_ERROR_BACKEND_UNAVAILABLE);
            STEP(contains(xfer_last_error(), "fork"));
            STEP(xfer_alloc(ctx, 64, 0, nullptr) == XFER_ERROR_INVALID_STATE); // inherited context
            STEP(host_backend_works());
            std::_Exit(0);
        }
        int status = 0;
        STEP(pid > 0 && ::waitpid(pid, &status, 0) == pid);
        STEP(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        STEP(xfer_close(ctx) == XFER_SUCCESS); // the parent's context is untouched
    });
}

// A fault that lands while a staged pageable copy is under way: the stream stops in
// the middle of the copy and the engine's watchdog (cudaStreamQuery) gives the copy up. The fault is reported (by the copy's call,
// the next synchronisation of its stream, or at the latest of the faulting kernel's stream)
// naming the CUDA error, later calls are refused, nothing hangs (the child's alarm turns a
// hang into a failure); both directions, both staging modes. The copy (256 MiB, ~5-10 ms)
// is long against the kernel's delay (~50 us), so the fault lands in its middle.
TEST(GpuStagedFaults, FaultInTheMiddleOfAStagedCopyIsReportedWithoutHang) {
    for (const char *mode : {"sync", "async"}) {
        for (const xfer_direction dir : {XFER_TO_DEVICE, XFER_TO_HOST}) {
            SCOPED_TRACE(std::string(mode) + (dir == XFER_TO_DEVICE ? " to device" : " to host"));
            // Set before fork: the child inherits it before its first CUDA call. Module loading
            // stays CUDA's default (lazy): the engine's threads make no CUDA call to get stuck.
            ::setenv("XFER_PAGEABLE_STAGING", mode, 1);
            // Every copy of the range staged: a copy of the same range again must not become a
            // registered DMA (the engine is what this test faults).
            ::setenv("XFER_PAGEABLE_PATH", "staged", 1);
            in_child([&] {
                const std::size_t n = std::size_t(256) << 20;
                xfer_context ctx = nullptr;
                xfer_stream s = nullptr, other = nullptr;
                void *dev = nullptr;
                STEP(xfer_open("pageable", 0, &ctx) == XFER_SUCCESS);
                STEP(xfer_stream_create(ctx, &s) == XFER_SUCCESS);
                STEP(xfer_stream_create(ctx, &other) == XFER_SUCCESS);
                STEP(cudaMalloc(&dev, n) == cudaSuccess);
                std::vector<unsigned char> host(n, 0x5a);
                const xfer_copy_kind kind = dir == XFER_TO_DEVICE ? XFER_COPY_HOST_TO_DEVICE : XFER_COPY_DEVICE_TO_HOST;
                void *dst = dir == XFER_TO_DEVICE ? dev : static_cast<void *>(host.data());
                const void *src = dir == XFER_TO_DEVICE ? static_cast<const void *>(host.data()) : dev;
                // A clean staged copy first: the engine's workers and slots exist.
                STEP(xfer_memcpy_async(ctx, dst, src, n, kind, s) == XFER_SUCCESS);
                STEP(xfer_stream_synchronize(s) == XFER_SUCCESS);
                STEP(xfer::test::launch_illegal_write_after(static_cast<cudaStream_t>(xfer_stream_native(other)), 50) ==
                     cudaSuccess);
                const xfer_status copied = xfer_memcpy_async(ctx, dst, src, n, kind, s);
                const std::string copy_message = xfer_last_error();
                const xfer_status synced = xfer_stream_synchronize(s);
                const std::string sync_message = xfer_last_error();
                const xfer_status other_synced = xfer_stream_synchronize(other);
                const std::string other_message = xfer_last_error();
                std::fprintf(stderr, "child: copy -> %s, its stream -> %s, the kernel's stream -> %s\n",
                             xfer_status_string(copied), xfer_status_string(synced), xfer_status_string(other_synced));
                const auto faulted = [](xfer_status st) {
                    return st == XFER_ERROR_BACKEND || st == XFER_ERROR_BACKEND_UNAVAILABLE;
                };
                STEP(copied == XFER_SUCCESS || faulted(copied));
                STEP(synced == XFER_SUCCESS || faulted(synced));
                STEP(faulted(other_synced));
                STEP(contains(copy_message.c_str(), "cudaErrorIllegalAddress") ||
                     contains(sync_message.c_str(), "cudaErrorIllegalAddress") ||
                     contains(other_message.c_str(), "cudaErrorIllegalAddress"));
                // Refused from now on, without hanging.
                STEP(xfer_memcpy_async(ctx, dst, src, n, kind, s) == XFER_ERROR_BACKEND_UNAVAILABLE);
                STEP(xfer_stream_synchronize(s) == XFER_ERROR_BACKEND_UNAVAILABLE);
                STEP(host_backend_works());
                (void)xfer_close(ctx);
            });
            ::unsetenv("XFER_PAGEABLE_STAGING");
            ::unsetenv("XFER_PAGEABLE_PATH");
        }
    }
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuFaults, ::testing::Values("pageable", "pinned", "managed", "zerocopy"),
                         [](const auto &info) { return info.param; });

} // namespace

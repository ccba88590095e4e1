// SPDX-License-Identifier: Apache-2.0
// Peer copies on real GPUs, checked against the CUDA runtime itself: the direct-access answer is
// cudaDeviceCanAccessPeer's, peer access is enabled both ways after the first copy (where the
// hardware allows it), bytes arrive on the other device, a pointer of the wrong device is
// refused by name, and a buffer freed with a peer copy still queued on the other device's
// stream is released only after it. Tests that need two GPUs skip with one ("fewer than 2
// CUDA devices"); the same-device refusal runs on one GPU.
#include <cstring>
#include <vector>

#include "gpu_fixture.hpp"

namespace xfer::test {
namespace {

class GpuPeer : public GpuBackendTest {
  protected:
    void SetUp() override {
        GpuBackendTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&devices_));
    }
    void TearDown() override {
        if (peer_ != nullptr) {
            EXPECT_XFER_OK(xfer_close(peer_));
        }
        GpuBackendTest::TearDown();
    }
    bool open_peer() {
        if (devices_ < 2) return false;
        EXPECT_XFER_OK(xfer_open(GetParam().c_str(), 1, &peer_));
        return peer_ != nullptr;
    }
    static std::vector<unsigned char> pattern(std::size_t n, unsigned seed) {
        std::vector<unsigned char> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 13);
        return v;
    }
    int devices_ = 0;
    xfer_context peer_ = nullptr;
};

#define REQUIRE_TWO_GPUS()                                                                                             \
    do {                                                                                                               \
        if (!open_peer()) GTEST_SKIP() << "fewer than 2 CUDA devices (" << devices_ << ")";                            \
    } while (0)

TEST_P(GpuPeer, SameDeviceIsRefusedBeforeCuda) {
    xfer_context same = nullptr;
    ASSERT_XFER_OK(xfer_open(GetParam().c_str(), 0, &same));
    int can = -1;
    EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_device_can_access_peer(ctx_, same, &can));
    EXPECT_NE(std::string(xfer_last_error()).find("device 0"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(can, -1);
    EXPECT_EQ(cudaSuccess, cudaGetLastError()); // nothing leaked into the application's error state
    EXPECT_XFER_OK(xfer_close(same));
}

TEST_P(GpuPeer, DirectAccessIsCudaDeviceCanAccessPeer) {
    REQUIRE_TWO_GPUS();
    int expected01 = 0, expected10 = 0, got01 = -1, got10 = -1;
    ASSERT_EQ(cudaSuccess, cudaDeviceCanAccessPeer(&expected01, 0, 1));
    ASSERT_EQ(cudaSuccess, cudaDeviceCanAccessPeer(&expected10, 1, 0));
    ASSERT_XFER_OK(xfer_device_can_access_peer(ctx_, peer_, &got01));
    ASSERT_XFER_OK(xfer_device_can_access_peer(peer_, ctx_, &got10));
    EXPECT_EQ(expected01 != 0, got01 == 1);
    EXPECT_EQ(expected10 != 0, got10 == 1);
}

TEST_P(GpuPeer, CopyArrivesAndEnablesPeerAccessOnce) {
    REQUIRE_TWO_GPUS();
    const std::size_t bytes = (32u << 20) + 5;
    xfer_buffer a = nullptr, b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, bytes, XFER_ALLOC_DEFAULT, &a));
    ASSERT_XFER_OK(xfer_alloc(peer_, bytes, XFER_ALLOC_DEFAULT, &b));
    const auto data = pattern(bytes, 7);
    std::memcpy(xfer_host_ptr(a), data.data(), bytes);
    ASSERT_XFER_OK(xfer_copy(a, XFER_TO_DEVICE, 0, bytes));
    std::memset(xfer_host_ptr(b), 0, bytes);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    for (int i = 0; i < 3; ++i) ASSERT_XFER_OK(xfer_copy_peer_async(b, 0, a, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, bytes));
    EXPECT_EQ(0, std::memcmp(data.data(), xfer_host_ptr(b), bytes));

    int can = 0;
    ASSERT_EQ(cudaSuccess, cudaDeviceCanAccessPeer(&can, 0, 1));
    if (can != 0 && !shared_view()) {
        // Enabled by xfer already: a second enable says so (and is cleared again).
        ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
        EXPECT_EQ(cudaErrorPeerAccessAlreadyEnabled, cudaDeviceEnablePeerAccess(1, 0));
        (void)cudaGetLastError();
    }
}

TEST_P(GpuPeer, PointerOfTheWrongDeviceIsRefusedByName) {
    REQUIRE_TWO_GPUS();
    if (shared_view()) GTEST_SKIP() << "device views are not cudaMalloc memory on " << GetParam();
    xfer_buffer a = nullptr, b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, 4096, XFER_ALLOC_DEFAULT, &a));
    ASSERT_XFER_OK(xfer_alloc(peer_, 4096, XFER_ALLOC_DEFAULT, &b));
    // dst claims to be memory of peer_'s device but is device 0's.
    EXPECT_EQ(XFER_ERROR_BACKEND,
              xfer_memcpy_peer_async(peer_, xfer_device_ptr(a), ctx_, xfer_device_ptr(b), 4096, stream_));
    EXPECT_NE(std::string(xfer_last_error()).find("memory of device 0"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(cudaSuccess, cudaGetLastError());
}

TEST_P(GpuPeer, FreeWaitsForAPeerCopyQueuedOnTheOtherDevice) {
    REQUIRE_TWO_GPUS();
    const std::size_t bytes = 256u << 20;
    xfer_buffer src = nullptr, dst = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, bytes, XFER_ALLOC_DEFAULT, &src));
    ASSERT_XFER_OK(xfer_alloc(peer_, bytes, XFER_ALLOC_DEFAULT, &dst));
    const auto data = pattern(bytes, 9);
    std::memcpy(xfer_host_ptr(src), data.data(), bytes);
    ASSERT_XFER_OK(xfer_copy(src, XFER_TO_DEVICE, 0, bytes));
    xfer_stream on_peer = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(peer_, &on_peer));
    // Several copies queued on device 1's stream read device 0's buffer; freeing it must wait.
    for (int i = 0; i < 8; ++i) ASSERT_XFER_OK(xfer_copy_peer_async(dst, 0, src, 0, bytes, on_peer));
    EXPECT_XFER_OK(xfer_free(src));
    EXPECT_EQ(XFER_SUCCESS, xfer_stream_query(on_peer)) << "xfer_free returned before the peer copies finished";
    EXPECT_XFER_OK(xfer_stream_synchronize(on_peer));
    ASSERT_XFER_OK(xfer_copy(dst, XFER_TO_HOST, 0, bytes));
    EXPECT_EQ(0, std::memcmp(data.data(), xfer_host_ptr(dst), bytes));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuPeer, ::testing::ValuesIn(kCudaBackends), param_name);

} // namespace
} // namespace xfer::test

// SPDX-License-Identifier: Apache-2.0
// xfer_memcpy_async and xfer_memcpy_batch_async between host memory and device views.
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_fixture.hpp"

namespace {

using namespace xfer::test;

class GpuRawCopy : public GpuBackendTest {};

TEST_P(GpuRawCopy, HostToDeviceToDeviceToHostRoundTrip) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = (3u << 20) + 17;
    const auto data = random_bytes(n, seed);
    xfer_buffer a = nullptr;
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &a));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &b));
    std::vector<unsigned char> back(n, 0);

    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(a), data.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, xfer_device_ptr(b), xfer_device_ptr(a), n, XFER_COPY_DEVICE_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(back == data);
    EXPECT_XFER_OK(xfer_free(a));
    EXPECT_XFER_OK(xfer_free(b));
}

TEST_P(GpuRawCopy, DefaultKindInfersTheDirection) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 1u << 20;
    const auto data = random_bytes(n, seed);
    xfer_buffer a = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &a));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(a), data.data(), n, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(a), n, XFER_COPY_DEFAULT, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(back == data);
    EXPECT_XFER_OK(xfer_free(a));
}

// Many small copies of different sizes scattered over a device view and back, once from
// pageable memory and once from the backend's own host view (page-locked on pinned/zero-copy).
TEST_P(GpuRawCopy, BatchScattersAndGathersManySmallCopies) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<std::size_t> size_of(1, 64u << 10);
    std::vector<std::size_t> offsets;
    std::vector<std::size_t> sizes;
    std::size_t n = 0;
    for (int i = 0; i < 97; ++i) {
        offsets.push_back(n);
        sizes.push_back(size_of(gen));
        n += sizes.back() + 64; // gaps: bytes outside the copies must stay untouched
    }
    const auto data = random_bytes(n, seed + 1);
    xfer_buffer src_buf = nullptr;
    xfer_buffer dev_buf = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &src_buf));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &dev_buf));
    std::memcpy(xfer_host_ptr(src_buf), data.data(), n);
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(dev_buf));

    for (const unsigned char *host_source : {data.data(), static_cast<const unsigned char *>(xfer_host_ptr(src_buf))}) {
        SCOPED_TRACE(host_source == data.data() ? "from pageable memory" : "from the backend's host view");
        std::vector<unsigned char> zeros(n, 0);
        std::vector<unsigned char> gathered(n, 0);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, zeros.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
        std::vector<void *> to_device;
        std::vector<const void *> from_host;
        std::vector<void *> to_host;
        std::vector<const void *> from_device;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            to_device.push_back(device + offsets[i]);
            from_host.push_back(host_source + offsets[i]);
            to_host.push_back(gathered.data() + offsets[i]);
            from_device.push_back(device + offsets[i]);
        }
        ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, to_device.data(), from_host.data(), sizes.data(), sizes.size(),
                                               XFER_COPY_HOST_TO_DEVICE, stream_));
        ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, to_host.data(), from_device.data(), sizes.data(), sizes.size(),
                                               XFER_COPY_DEVICE_TO_HOST, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        std::vector<unsigned char> expected(n, 0);
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            std::memcpy(expected.data() + offsets[i], data.data() + offsets[i], sizes[i]);
        }
        EXPECT_TRUE(gathered == expected);
    }
    EXPECT_XFER_OK(xfer_free(src_buf));
    EXPECT_XFER_OK(xfer_free(dev_buf));
}

// A kind that contradicts the pointers is refused by name, and nothing is queued.
TEST_P(GpuRawCopy, KindThatContradictsThePointersIsRefused) {
    const std::size_t n = 4096;
    xfer_buffer a = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &a));
    std::vector<unsigned char> host(n, 7);
    std::vector<unsigned char> other(n, 9);
    EXPECT_EQ(XFER_ERROR_BACKEND,
              xfer_memcpy_async(ctx_, host.data(), other.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "destination is pageable host memory")) << xfer_last_error();
    EXPECT_EQ(XFER_ERROR_BACKEND,
              xfer_memcpy_async(ctx_, xfer_device_ptr(a), other.data(), n, XFER_COPY_DEVICE_TO_DEVICE, stream_));
    EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "source is pageable host memory")) << xfer_last_error();
    void *dsts[] = {xfer_device_ptr(a), host.data()};
    const void *srcs[] = {other.data(), other.data()};
    const std::size_t sizes[] = {n, n};
    EXPECT_EQ(XFER_ERROR_BACKEND,
              xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 2, XFER_COPY_HOST_TO_DEVICE, stream_));
    EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "copy 1 of 2")) << xfer_last_error();
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(std::vector<unsigned char>(n, 7), host) << "a refused copy must not run";
    if (!shared_view()) {
        // cudaMalloc memory is not host memory.
        EXPECT_EQ(XFER_ERROR_BACKEND,
                  xfer_memcpy_async(ctx_, xfer_device_ptr(a), other.data(), n, XFER_COPY_HOST_TO_HOST, stream_));
        EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "destination is device memory")) << xfer_last_error();
    }
    EXPECT_XFER_OK(xfer_free(a));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuRawCopy, ::testing::ValuesIn(kCudaBackends), param_name);

// Backends whose device views are device memory (cudaMalloc).
class GpuRawCopyToDeviceMemory : public GpuBackendTest {};

// Batch entries that start in host memory the application page-locked (cudaHostRegister, as
// another context's registration cache does for whole pages) and run past the registration's end: the driver
// refuses such a copy in one piece, and a packing kernel must not reach past the registered
// pages. Each goes in pieces, as xfer_memcpy_async copies it: small and large entries, both
// directions, beside an ordinary entry; every byte compared, the bytes around untouched.
TEST_P(GpuRawCopyToDeviceMemory, BatchEntriesRunningPastARegistrationMadeElsewhereCopyExactly) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t registered = 2u << 20, n = registered + (256u << 10);
    auto *region = static_cast<unsigned char *>(std::aligned_alloc(4096, n));
    ASSERT_NE(nullptr, region);
    const auto data = random_bytes(n, seed);
    std::memcpy(region, data.data(), n);
    // Two registrations back to back: [0, 1 MiB) and [1 MiB, 2 MiB).
    ASSERT_EQ(cudaSuccess, cudaHostRegister(region, registered / 2, cudaHostRegisterDefault));
    ASSERT_EQ(cudaSuccess, cudaHostRegister(region + registered / 2, registered / 2, cudaHostRegisterDefault));
    xfer_buffer dev = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &dev));
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(dev));
    std::vector<unsigned char> zeros(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, zeros.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    // Packed size (8 KiB) from the first registration into the second, copy-engine size (64 KiB)
    // from the second into unregistered memory; one entry after both.
    const std::size_t offsets[] = {registered / 2 - 1000, registered - (32u << 10), registered + (64u << 10)};
    const std::size_t sizes[] = {8u << 10, 64u << 10, 4u << 10};
    void *to_device[3];
    const void *from_host[3];
    for (int i = 0; i < 3; ++i) {
        to_device[i] = device + offsets[i];
        from_host[i] = region + offsets[i];
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, to_device, from_host, sizes, 3, XFER_COPY_HOST_TO_DEVICE, stream_));
    std::vector<unsigned char> on_device(n, 0xff);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, on_device.data(), device, n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    std::vector<unsigned char> expected(n, 0);
    for (int i = 0; i < 3; ++i) {
        std::memcpy(expected.data() + offsets[i], data.data() + offsets[i], sizes[i]);
    }
    EXPECT_TRUE(on_device == expected) << "to the device";
    // Back into the registered region, across its end again (those ranges cleared first).
    void *to_host[3];
    const void *from_device[3];
    for (int i = 0; i < 3; ++i) {
        std::memset(region + offsets[i], 0, sizes[i]);
        to_host[i] = region + offsets[i];
        from_device[i] = device + offsets[i];
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, to_host, from_device, sizes, 3, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(0, std::memcmp(region, data.data(), n)) << "to the host";
    EXPECT_EQ(cudaSuccess, cudaHostUnregister(region));
    EXPECT_EQ(cudaSuccess, cudaHostUnregister(region + registered / 2));
    EXPECT_XFER_OK(xfer_free(dev));
    std::free(region);
}

INSTANTIATE_TEST_SUITE_P(DeviceMemoryViews, GpuRawCopyToDeviceMemory, ::testing::Values("pageable", "pinned"),
                         param_name);

} // namespace

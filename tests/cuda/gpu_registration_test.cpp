// SPDX-License-Identifier: Apache-2.0
// xfer_register on real page-locking (every CUDA backend) and the pinned backend's automatic
// registration cache: hits after the first copy, a freed and re-mapped range never served from
// the old registration, eviction under the byte limit.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime_api.h>

#include "gpu_fixture.hpp"

namespace {

using namespace xfer::test;

class GpuRegistration : public GpuBackendTest {};

TEST_P(GpuRegistration, AlreadyPageLockedMemoryIsInvalidState) {
    void *locked = nullptr;
    ASSERT_EQ(cudaSuccess, cudaHostAlloc(&locked, 1 << 20, cudaHostAllocDefault));
    EXPECT_EQ(XFER_ERROR_INVALID_STATE, xfer_register(ctx_, locked, 1 << 20, XFER_REGISTER_DEFAULT));
    EXPECT_NE(std::string(xfer_last_error()).find("already page-locked"), std::string::npos) << xfer_last_error();
    // Part of it, starting inside.
    EXPECT_EQ(XFER_ERROR_INVALID_STATE,
              xfer_register(ctx_, static_cast<char *>(locked) + 8192, 4096, XFER_REGISTER_DEFAULT));
    cudaFreeHost(locked);
}

TEST_P(GpuRegistration, RegisteredRangeIsPageLockedUntilUnregistered) {
    const std::size_t n = 4u << 20;
    void *p = std::aligned_alloc(4096, n);
    ASSERT_NE(nullptr, p);
    ASSERT_XFER_OK(xfer_register(ctx_, p, n, XFER_REGISTER_DEFAULT));
    cudaPointerAttributes a{};
    ASSERT_EQ(cudaSuccess, cudaPointerGetAttributes(&a, static_cast<char *>(p) + n - 1));
    EXPECT_EQ(cudaMemoryTypeHost, a.type);
    ASSERT_XFER_OK(xfer_unregister(ctx_, p));
    ASSERT_EQ(cudaSuccess, cudaPointerGetAttributes(&a, p));
    EXPECT_EQ(cudaMemoryTypeUnregistered, a.type);
    std::free(p);
}

TEST_P(GpuRegistration, ReadOnlyMappedMemoryRegistersWithTheReadOnlyFlag) {
    int supported = 0;
    ASSERT_EQ(cudaSuccess, cudaDeviceGetAttribute(&supported, cudaDevAttrHostRegisterReadOnlySupported, 0));
    const std::size_t n = 2u << 20;
    const auto data = random_bytes(n, fresh_seed());
    const int fd = memfd_create("xfer-ro", 0);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(static_cast<ssize_t>(n), write(fd, data.data(), n));
    void *ro = mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(MAP_FAILED, ro);
    const xfer_status registered = xfer_register(ctx_, ro, n, XFER_REGISTER_READ_ONLY);
    if (!supported && registered != XFER_SUCCESS) {
        // (No GTEST_SKIP: ctest would report the whole GPU suite as skipped.) Without the flag
        // the driver may refuse read-only pages: a failure that names the call, nothing registered.
        EXPECT_NE(std::string(xfer_last_error()).find("cudaHostRegister"), std::string::npos) << xfer_last_error();
        xfer_registration_stats st{};
        ASSERT_XFER_OK(xfer_registration_get_stats(ctx_, &st));
        EXPECT_EQ(0u, st.registered_ranges);
        munmap(ro, n);
        close(fd);
        return;
    }
    ASSERT_XFER_OK(registered);
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &b));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), ro, n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(back == data);
    ASSERT_XFER_OK(xfer_unregister(ctx_, ro));
    munmap(ro, n);
    close(fd);
}

// Copies classify the views of xfer's own buffers from what they were at allocation, without a
// driver query (known_memory.hpp); registering a view changes what it is, and the copies see it.
// Probed through the kind check: a device-side destination may be any memory the device can
// address (device, managed, mapped page-locked), never pageable memory.
TEST_P(GpuRegistration, CopiesSeeABufferViewsRegistrationComeAndGo) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const std::size_t n = 1u << 20;
    const auto data = random_bytes(n, seed);
    xfer_buffer src = nullptr, dst = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &src));
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &dst));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(src), data.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    void *host_view = xfer_host_ptr(dst);
    auto device_copy_into_host_view = [&] {
        return xfer_memcpy_async(ctx_, host_view, xfer_device_ptr(src), n, XFER_COPY_DEVICE_TO_DEVICE, stream_);
    };
    auto arrived = [&] {
        std::vector<unsigned char> got(n);
        std::memcpy(got.data(), host_view, n);
        return got == data;
    };
    cudaPointerAttributes a{};
    ASSERT_EQ(cudaSuccess, cudaPointerGetAttributes(&a, host_view));
    if (a.type == cudaMemoryTypeUnregistered) {
        // A pageable host view (the pageable backend): refused until registered, then accepted
        // and exact, refused again once unregistered.
        EXPECT_EQ(XFER_ERROR_BACKEND, device_copy_into_host_view());
        EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "destination is pageable host memory")) << xfer_last_error();
        ASSERT_XFER_OK(xfer_register(ctx_, host_view, n, XFER_REGISTER_DEFAULT));
        ASSERT_XFER_OK(device_copy_into_host_view());
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_TRUE(arrived());
        ASSERT_XFER_OK(xfer_unregister(ctx_, host_view));
        EXPECT_EQ(XFER_ERROR_BACKEND, device_copy_into_host_view());
        EXPECT_NE(nullptr, std::strstr(xfer_last_error(), "destination is pageable host memory")) << xfer_last_error();
    } else {
        // Page-locked or managed host views: the device addresses them, copy after copy.
        for (int round = 0; round < 2; ++round) {
            std::memset(host_view, 0, n);
            ASSERT_XFER_OK(device_copy_into_host_view());
            ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
            EXPECT_TRUE(arrived()) << "round " << round;
        }
    }
    EXPECT_XFER_OK(xfer_free(src));
    EXPECT_XFER_OK(xfer_free(dst));
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuRegistration, ::testing::ValuesIn(kCudaBackends), param_name);

// ------------------------------------------------------------- the pinned registration cache

class GpuRegistrationCache : public GpuBackendTest {
  protected:
    xfer_registration_stats stats() {
        xfer_registration_stats s{};
        EXPECT_XFER_OK(xfer_registration_get_stats(ctx_, &s));
        return s;
    }
    void to_device_and_back(const unsigned char *host, std::size_t n, xfer_buffer dev) {
        std::vector<unsigned char> back(n, 0);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(dev), host, n, XFER_COPY_HOST_TO_DEVICE, stream_));
        ASSERT_XFER_OK(
            xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(dev), n, XFER_COPY_DEVICE_TO_HOST, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_EQ(0, std::memcmp(back.data(), host, n));
    }
    // A fresh anonymous mapping of n random bytes, copied to `*dev` (allocated here) and back, so
    // that the cache holds it; nullptr (with a test failure) where a step failed.
    unsigned char *cached_mapping(std::size_t n, xfer_buffer *dev) {
        void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT_NE(MAP_FAILED, m);
        if (m == MAP_FAILED) return nullptr;
        auto *p = static_cast<unsigned char *>(m);
        const auto bytes = random_bytes(n, fresh_seed());
        std::memcpy(p, bytes.data(), n);
        EXPECT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, dev));
        to_device_and_back(p, n, *dev);
        return p;
    }
    bool cache_can_prove_hits() {
        // Without frame numbers the cache never registers (registration_cache.hpp).
        const std::size_t n = 2u << 20;
        auto *p = static_cast<unsigned char *>(std::aligned_alloc(4096, n));
        std::memset(p, 1, n);
        xfer_buffer b = nullptr;
        EXPECT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &b));
        EXPECT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), p, n, XFER_COPY_HOST_TO_DEVICE, stream_));
        EXPECT_XFER_OK(xfer_stream_synchronize(stream_));
        const bool cached = stats().cache_ranges > 0;
        EXPECT_XFER_OK(xfer_free(b));
        std::free(p); // the cache notices: the next copy from these addresses re-checks
        return cached;
    }
};

TEST_P(GpuRegistrationCache, RepeatedCopiesFromOneMallocBufferHitAfterTheFirst) {
    const bool cached = cache_can_prove_hits();
    const std::size_t n = 64u << 20;
    auto data = random_bytes(n, fresh_seed());
    xfer_buffer dev = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &dev));
    const xfer_registration_stats before = stats();
    for (int i = 0; i < 4; ++i) {
        ASSERT_XFER_OK(
            xfer_memcpy_async(ctx_, xfer_device_ptr(dev), data.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    }
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    const xfer_registration_stats after = stats();
    if (cached) {
        EXPECT_EQ(before.cache_misses + 1, after.cache_misses);
        EXPECT_EQ(before.cache_hits + 3, after.cache_hits);
        EXPECT_GE(after.cache_bytes, n);
    } else {
        // No frame numbers here (no CAP_SYS_ADMIN): the cache stays off, copies still right.
        EXPECT_EQ(0u, after.cache_ranges);
        EXPECT_EQ(before.cache_hits, after.cache_hits);
    }
    to_device_and_back(data.data(), n, dev);
}

// Two contexts, two buffers that share a page (as heap neighbours do): the first context's
// cache page-locks whole pages, so the second buffer starts inside a registration its own
// context did not make and runs past its end. The driver refuses such a copy in one piece
// (cudaErrorInvalidValue); xfer copies it in pieces split at the registration's end. Both
// directions, every byte compared. (Found by xfer_stress, phase 2: one context per thread.)
TEST_P(GpuRegistrationCache, BufferStartingInsideAnotherContextsRegistrationCopiesExactly) {
    const std::size_t first = (2u << 20) + 100, second = (2u << 20) - 100, n = first + second;
    auto *region = static_cast<unsigned char *>(std::aligned_alloc(4096, n));
    ASSERT_NE(nullptr, region);
    const auto data = random_bytes(n, fresh_seed());
    std::memcpy(region, data.data(), n);
    unsigned char *a = region, *b = region + first; // b's first page is a's last
    xfer_context other = nullptr;
    xfer_stream other_stream = nullptr;
    ASSERT_XFER_OK(xfer_open("pinned", 0, &other));
    ASSERT_XFER_OK(xfer_stream_create(other, &other_stream));
    xfer_buffer dev_a = nullptr, dev_b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(other, first, XFER_ALLOC_DEFAULT, &dev_a));
    ASSERT_XFER_OK(xfer_alloc(ctx_, second, XFER_ALLOC_DEFAULT, &dev_b));
    // The other context's cache registers a's pages, b's first page among them.
    ASSERT_XFER_OK(xfer_memcpy_async(other, xfer_device_ptr(dev_a), a, first, XFER_COPY_HOST_TO_DEVICE, other_stream));
    ASSERT_XFER_OK(xfer_stream_synchronize(other_stream));
    cudaPointerAttributes attrs{};
    ASSERT_EQ(cudaSuccess, cudaPointerGetAttributes(&attrs, b));
    const bool shared_page_locked = attrs.type == cudaMemoryTypeHost;
    if (cache_can_prove_hits()) {
        EXPECT_TRUE(shared_page_locked) << "the other context's cache did not page-lock the shared page";
    }
    // This context copies b both ways.
    std::vector<unsigned char> back(second, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(dev_b), b, second, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(dev_b), second, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(0, std::memcmp(back.data(), data.data() + first, second)) << "shared page locked: " << shared_page_locked;
    std::memset(b, 0, second);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, b, xfer_device_ptr(dev_b), second, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(0, std::memcmp(b, data.data() + first, second));
    EXPECT_EQ(0, std::memcmp(a, data.data(), first)) << "the neighbour's bytes were touched";
    EXPECT_XFER_OK(xfer_close(other)); // unregisters a's pages
    EXPECT_XFER_OK(xfer_free(dev_b));
    std::free(region);
}

TEST_P(GpuRegistrationCache, FreedAndRemappedRangeNeverHitsTheOldRegistration) {
    const bool cached = cache_can_prove_hits();
    const std::size_t n = 8u << 20;
    xfer_buffer dev = nullptr;
    unsigned char *p = cached_mapping(n, &dev);
    ASSERT_NE(nullptr, p);
    // Freed and allocated again at the same address, with other bytes.
    ASSERT_EQ(0, munmap(p, n));
    auto *again = static_cast<unsigned char *>(
        mmap(p, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
    ASSERT_EQ(p, again);
    const auto second = random_bytes(n, fresh_seed() + 1);
    std::memcpy(again, second.data(), n);
    const xfer_registration_stats before = stats();
    to_device_and_back(again, n, dev); // compares the device's bytes with `second`
    if (cached) EXPECT_GT(stats().cache_evictions, before.cache_evictions);
    EXPECT_XFER_OK(xfer_free(dev));
    munmap(again, n);
}

// A copy to the host into a cached range whose pages changed in its middle: the cache compares
// each piece's pages before that piece's DMA, so the pieces before the change land through the
// registration, the rest goes the driver's way, and every byte of the new mapping is the
// device's; the range is evicted.
TEST_P(GpuRegistrationCache, CopyToTheHostIntoAPartlyRemappedRangeLandsInTheNewPages) {
    const bool cached = cache_can_prove_hits();
    const std::size_t n = 24u << 20; // three pieces of the proof
    xfer_buffer dev = nullptr;
    unsigned char *p = cached_mapping(n, &dev);
    ASSERT_NE(nullptr, p);
    const auto page_locked = [](const void *q) {
        cudaPointerAttributes attrs{};
        return cudaPointerGetAttributes(&attrs, q) == cudaSuccess && attrs.type == cudaMemoryTypeHost;
    };
    if (cached) EXPECT_TRUE(page_locked(p)) << "the range was not cached";
    // 4 MiB in the second piece get new pages; the device gets other bytes.
    const std::size_t hole = 12u << 20, hole_bytes = 4u << 20;
    ASSERT_EQ(0, munmap(p + hole, hole_bytes));
    ASSERT_EQ(p + hole,
              mmap(p + hole, hole_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
    std::memset(p + hole, 0xEE, hole_bytes);
    const auto on_device = random_bytes(n, fresh_seed() + 1);
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, xfer_device_ptr(dev), on_device.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    const xfer_registration_stats before = stats();
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, p, xfer_device_ptr(dev), n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(0, std::memcmp(p, on_device.data(), hole)) << "the piece before the change";
    EXPECT_EQ(0, std::memcmp(p + hole, on_device.data() + hole, hole_bytes)) << "the new pages";
    EXPECT_EQ(0, std::memcmp(p + hole + hole_bytes, on_device.data() + hole + hole_bytes, n - hole - hole_bytes))
        << "the pieces after the change";
    if (cached) {
        EXPECT_EQ(before.cache_evictions + 1, stats().cache_evictions);
        EXPECT_FALSE(page_locked(p)) << "the stale range stayed cached";
    }
    EXPECT_XFER_OK(xfer_free(dev));
    munmap(p, n);
}

// A copy that starts inside a cached registration and runs past its end is refused by the
// driver (cudaErrorInvalidValue) unless the cache lets the range go first: single copies below
// registration_min, copies at or above it, and batch entries, both directions.
TEST_P(GpuRegistrationCache, CopiesStraddlingACachedRangeAreAcceptedAndExact) {
    const bool cached = cache_can_prove_hits();
    const std::size_t n = 8u << 20;
    const std::size_t half = n / 2;
    auto *host = static_cast<unsigned char *>(std::aligned_alloc(4096, n));
    ASSERT_NE(nullptr, host);
    const auto data = random_bytes(n, fresh_seed());
    std::memcpy(host, data.data(), n);
    xfer_buffer dev = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &dev));
    auto *d = static_cast<unsigned char *>(xfer_device_ptr(dev));
    const xfer_registration_stats before = stats();
    // [0, half) is cached now (a miss that registers it).
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, d, host, half, XFER_COPY_HOST_TO_DEVICE, stream_));
    const bool registered = stats().cache_ranges > before.cache_ranges;
    EXPECT_EQ(cached, registered);
    // Below registration_min, across the end of the cached range.
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, d + half - 32768, host + half - 32768, 65536, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, d, host, half, XFER_COPY_HOST_TO_DEVICE, stream_)); // cached again
    // A batch entry the copy engine takes (above the pack limit), across the end again.
    void *dsts[] = {d + half - (300u << 10)};
    const void *srcs[] = {host + half - (300u << 10)};
    const size_t sizes[] = {600u << 10};
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 1, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, d, host, half, XFER_COPY_HOST_TO_DEVICE, stream_)); // cached again
    // At or above registration_min: the rest of the buffer, starting inside the cached range.
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, d + half - 4096, host + half - 4096, n - half + 4096,
                                     XFER_COPY_HOST_TO_DEVICE, stream_));
    // Back to the host across both cached ranges' ends, into a host range that is cached.
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), d, n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(
        xfer_memcpy_async(ctx_, host + half - 8192, d + half - 8192, 16384, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(back == data);
    EXPECT_EQ(0, std::memcmp(host, data.data(), n));
    if (cached) EXPECT_GT(stats().cache_evictions, before.cache_evictions);
    EXPECT_XFER_OK(xfer_free(dev));
    std::free(host);
}

TEST_P(GpuRegistrationCache, EvictsUnderTheByteLimit) {
    // A context of its own with an 8 MiB limit.
    ASSERT_EQ(0, setenv("XFER_PINNED_PIN_LIMIT", "8MiB", 1));
    xfer_context small = nullptr;
    const xfer_status opened = xfer_open("pinned", 0, &small);
    unsetenv("XFER_PINNED_PIN_LIMIT");
    ASSERT_XFER_OK(opened);
    xfer_stream s = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(small, &s));
    const std::size_t n = 3u << 20;
    xfer_buffer dev = nullptr;
    ASSERT_XFER_OK(xfer_alloc(small, n, XFER_ALLOC_DEFAULT, &dev));
    std::vector<std::vector<unsigned char>> sources;
    for (int i = 0; i < 4; ++i) sources.push_back(random_bytes(n, fresh_seed() + i));
    for (int round = 0; round < 2; ++round) {
        for (const auto &src : sources) {
            std::vector<unsigned char> back(n, 0);
            ASSERT_XFER_OK(xfer_memcpy_async(small, xfer_device_ptr(dev), src.data(), n, XFER_COPY_HOST_TO_DEVICE, s));
            ASSERT_XFER_OK(xfer_memcpy_async(small, back.data(), xfer_device_ptr(dev), n, XFER_COPY_DEVICE_TO_HOST, s));
            ASSERT_XFER_OK(xfer_stream_synchronize(s));
            ASSERT_TRUE(back == src);
            xfer_registration_stats st{};
            ASSERT_XFER_OK(xfer_registration_get_stats(small, &st));
            EXPECT_LE(st.cache_bytes, st.cache_limit_bytes);
            EXPECT_EQ(8u << 20, st.cache_limit_bytes);
        }
    }
    xfer_registration_stats st{};
    ASSERT_XFER_OK(xfer_registration_get_stats(small, &st));
    if (st.cache_ranges > 0 || st.cache_hits > 0) EXPECT_GT(st.cache_evictions, 0u);
    EXPECT_XFER_OK(xfer_close(small));
}

TEST_P(GpuRegistrationCache, BadParametersAreConfigErrorsNamingThem) {
    struct Case {
        const char *env, *value, *named;
    };
    // A packed entry must fit a quarter of a staging slot; xfer starts at most 256 host threads.
    for (const Case &c : {Case{"XFER_PINNED_BATCH_PACK_MAX", "4MiB", "batch_pack_max"},
                          Case{"XFER_PINNED_HOST_THREADS", "1000", "host_threads"},
                          Case{"XFER_PINNED_BATCH_HOST_THREADS", "0", "batch_host_threads"}}) {
        ASSERT_EQ(0, setenv(c.env, c.value, 1));
        xfer_context other = nullptr;
        const xfer_status st = xfer_open("pinned", 0, &other);
        const std::string message = xfer_last_error();
        unsetenv(c.env);
        EXPECT_EQ(XFER_ERROR_CONFIG, st) << c.env;
        EXPECT_EQ(nullptr, other);
        EXPECT_NE(message.find(c.named), std::string::npos) << message;
    }
}

INSTANTIATE_TEST_SUITE_P(Pinned, GpuRegistrationCache, ::testing::Values(std::string("pinned")), param_name);

} // namespace

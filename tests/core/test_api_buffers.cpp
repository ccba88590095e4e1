// SPDX-License-Identifier: Apache-2.0
// Buffers and copies through the core with the mock backends: data round-trips, argument
// validation before the backend, failures reported with messages, nothing leaked.
#include <cstring>
#include <limits>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

class Buffers : public CoreTest {
  protected:
    void SetUp() override {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &stream));
    }
    void TearDown() override {
        if (ctx != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
    }
    xfer_context ctx = nullptr;
    xfer_stream stream = nullptr;
};

TEST_F(Buffers, RandomBytesRoundTripThroughTheDeviceView) {
    constexpr std::size_t n = 1 << 16;
    xfer_buffer buf = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, n, XFER_ALLOC_DEFAULT, &buf));
    EXPECT_EQ(xfer_buffer_size(buf), n);
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(buf));
    auto *dev = static_cast<unsigned char *>(xfer_device_ptr(buf));
    ASSERT_NE(host, nullptr);
    ASSERT_NE(dev, nullptr);
    ASSERT_NE(host, dev);

    auto data = random_bytes(n, 1);
    std::memcpy(host, data.data(), n);
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(buf, XFER_TO_DEVICE, 0, n));
    EXPECT_EQ(std::memcmp(dev, data.data(), n), 0);
    std::memset(host, 0, n);
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(buf, XFER_TO_HOST, 0, n));
    EXPECT_EQ(std::memcmp(host, data.data(), n), 0);

    // A sub-range on a user stream touches only that range.
    auto patch = random_bytes(100, 2);
    std::memcpy(host + 1000, patch.data(), patch.size());
    ASSERT_XFER(XFER_SUCCESS, xfer_copy_async(buf, XFER_TO_DEVICE, 1000, patch.size(), stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_synchronize(stream));
    EXPECT_EQ(std::memcmp(dev + 1000, patch.data(), patch.size()), 0);
    EXPECT_EQ(std::memcmp(dev, data.data(), 1000), 0);
    EXPECT_EQ(std::memcmp(dev + 1100, data.data() + 1100, n - 1100), 0);
    // The last byte exactly.
    ASSERT_XFER(XFER_SUCCESS, xfer_copy_async(buf, XFER_TO_HOST, n - 1, 1, stream));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(buf));
}

TEST_F(Buffers, AllocValidatesArgumentsBeforeTheBackend) {
    long calls = mockfull_calls();
    xfer_buffer buf = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_alloc(ctx, 16, 0, nullptr));
    EXPECT_STREQ(xfer_last_error(), "xfer_alloc: buf is NULL");
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE, xfer_alloc(ctx, 0, 0, &buf));
    EXPECT_STREQ(xfer_last_error(), "xfer_alloc: bytes is 0");
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_alloc(ctx, 16, 0x10, &buf));
    EXPECT_NE(std::string(xfer_last_error()).find("unknown bits 0x10"), std::string::npos) << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_alloc(ctx, 16, XFER_ALLOC_PREFER_DEVICE | XFER_ALLOC_PREFER_HOST, &buf));
    EXPECT_NE(std::string(xfer_last_error()).find("exclude each other"), std::string::npos);
    EXPECT_EQ(buf, nullptr);
    EXPECT_EQ(mockfull_calls(), calls);
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 16, XFER_ALLOC_READ_MOSTLY | XFER_ALLOC_PREFER_DEVICE, &buf));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(buf));
}

TEST_F(Buffers, OutOfMemoryCarriesTheBackendMessageAndContextStaysUsable) {
    long live = mockfull_live();
    xfer_buffer buf = nullptr;
    EXPECT_XFER(XFER_ERROR_OUT_OF_MEMORY, xfer_alloc(ctx, std::size_t(1) << 50, 0, &buf));
    EXPECT_EQ(buf, nullptr);
    EXPECT_NE(std::string(xfer_last_error()).find("malloc(1125899906842624 bytes)"), std::string::npos)
        << xfer_last_error();
    EXPECT_EQ(mockfull_live(), live);
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 32, 0, &buf));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(buf));
    EXPECT_EQ(mockfull_live(), live);
}

TEST_F(Buffers, BackendFailureWithoutMessageGetsAGenericOne) {
    EnvGuard fail("XFER_MOCKFULL_FAIL_SILENTLY", "1");
    xfer_context failing = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &failing));
    xfer_buffer buf = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND, xfer_alloc(failing, 16, 0, &buf));
    EXPECT_STREQ(
        xfer_last_error(),
        "xfer_alloc: backend 'mockfull' failed in its buffer_alloc entry with XFER_ERROR_BACKEND and gave no message");
    EXPECT_EQ(buf, nullptr);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(failing));
}

TEST_F(Buffers, CopyValidatesDirectionSizeAndBounds) {
    xfer_buffer buf = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 100, 0, &buf));
    long calls = mockfull_calls();
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_copy(buf, static_cast<xfer_direction>(3), 0, 1));
    EXPECT_NE(std::string(xfer_last_error()).find("dir 3"), std::string::npos) << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_copy_async(buf, static_cast<xfer_direction>(0), 0, 1, stream));
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE, xfer_copy(buf, XFER_TO_DEVICE, 0, 0));
    EXPECT_STREQ(xfer_last_error(), "xfer_copy: bytes is 0");
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE,
                xfer_copy_async(buf, XFER_TO_DEVICE, std::numeric_limits<std::size_t>::max(), 2, stream));
    EXPECT_NE(std::string(xfer_last_error()).find("overflows"), std::string::npos) << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_OUT_OF_BOUNDS, xfer_copy(buf, XFER_TO_HOST, 50, 51));
    EXPECT_STREQ(xfer_last_error(), "xfer_copy: offset 50 + bytes 51 = 101 is past the end of the 100-byte buffer");
    EXPECT_XFER(XFER_ERROR_OUT_OF_BOUNDS, xfer_copy_async(buf, XFER_TO_HOST, 100, 1, stream));
    EXPECT_EQ(mockfull_calls(), calls);
    EXPECT_XFER(XFER_SUCCESS, xfer_copy(buf, XFER_TO_HOST, 50, 50));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(buf));
}

TEST_F(Buffers, CloseReleasesEverythingStillOwned) {
    long live_before_open = mockfull_live();
    xfer_context c = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 1, &c));
    xfer_buffer bufs[3] = {};
    xfer_stream s = nullptr;
    xfer_event e = nullptr;
    for (auto &b : bufs) ASSERT_XFER(XFER_SUCCESS, xfer_alloc(c, 64, 0, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(c, &s));
    ASSERT_XFER(XFER_SUCCESS, xfer_event_create(c, 0, &e));
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(bufs[0], XFER_TO_DEVICE, 0, 64)); // creates the internal stream
    ASSERT_XFER(XFER_SUCCESS, xfer_free(bufs[1]));
    // context + 2 buffers + user stream + internal stream + event
    EXPECT_EQ(mockfull_live(), live_before_open + 6);
    ASSERT_XFER(XFER_SUCCESS, xfer_close(c));
    EXPECT_EQ(mockfull_live(), live_before_open);
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(bufs[0]));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(bufs[2]));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_stream_destroy(s));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_event_destroy(e));
}

TEST_F(Buffers, MinimalBackendAnswersNotSupportedForCopies) {
    xfer_context c = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &c));
    xfer_buffer buf = nullptr;
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(c, 64, 0, &buf));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(c, &s));
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_copy(buf, XFER_TO_DEVICE, 0, 64));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_copy");
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_copy_async(buf, XFER_TO_DEVICE, 0, 64, s));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_copy_async");
    char a[4] = {1, 2, 3, 4}, b[4] = {};
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_memcpy_async(c, b, a, 4, XFER_COPY_HOST_TO_HOST, s));
    void *dsts[1] = {b};
    const void *srcs[1] = {a};
    std::size_t sizes[1] = {4};
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_memcpy_batch_async(c, dsts, srcs, sizes, 1, XFER_COPY_HOST_TO_HOST, s));
    xfer_device_info info{};
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_device_get_info(c, &info));
    EXPECT_STREQ(xfer_last_error(), "backend 'mock' does not implement xfer_device_get_info");
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_synchronize(s));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(c));
}

TEST_F(Buffers, MemcpyAsyncCopiesAndValidates) {
    auto src = random_bytes(4096, 3);
    std::vector<unsigned char> dst(4096, 0);
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_async(ctx, dst.data(), src.data(), src.size(), XFER_COPY_DEFAULT, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_synchronize(stream));
    EXPECT_EQ(dst, src);
    long calls = mockfull_calls();
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_memcpy_async(ctx, nullptr, src.data(), 4, XFER_COPY_DEFAULT, stream));
    EXPECT_STREQ(xfer_last_error(), "xfer_memcpy_async: dst is NULL");
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_memcpy_async(ctx, dst.data(), nullptr, 4, XFER_COPY_DEFAULT, stream));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_async(ctx, dst.data(), src.data(), 4, static_cast<xfer_copy_kind>(5), stream));
    EXPECT_NE(std::string(xfer_last_error()).find("kind 5"), std::string::npos);
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE, xfer_memcpy_async(ctx, dst.data(), src.data(), 0, XFER_COPY_DEFAULT, stream));
    EXPECT_EQ(mockfull_calls(), calls);
}

TEST_F(Buffers, BatchCopiesEveryEntryViaTheFallback) {
    constexpr std::size_t kCount = 5;
    std::vector<std::vector<unsigned char>> src, dst;
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < kCount; ++i) {
        src.push_back(random_bytes(100 + i * 37, unsigned(10 + i)));
        dst.emplace_back(src.back().size(), 0);
    }
    for (std::size_t i = 0; i < kCount; ++i) {
        dsts.push_back(dst[i].data());
        srcs.push_back(src[i].data());
        sizes.push_back(src[i].size());
    }
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_batch_async(ctx, dsts.data(), srcs.data(), sizes.data(), kCount,
                                                      XFER_COPY_HOST_TO_HOST, stream));
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_synchronize(stream));
    for (std::size_t i = 0; i < kCount; ++i) EXPECT_EQ(dst[i], src[i]) << i;
}

TEST_F(Buffers, BatchValidationNamesTheBadIndexAndQueuesNothing) {
    unsigned char a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {}, c[8] = {};
    void *dsts[3] = {b, c, b};
    const void *srcs[3] = {a, a, a};
    std::size_t sizes[3] = {8, 8, 8};
    long calls = mockfull_calls();
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE,
                xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 0, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_STREQ(xfer_last_error(), "xfer_memcpy_batch_async: count is 0");
    sizes[2] = 0;
    EXPECT_XFER(XFER_ERROR_INVALID_SIZE,
                xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_STREQ(xfer_last_error(), "xfer_memcpy_batch_async: sizes[2] is 0");
    sizes[2] = 8;
    dsts[1] = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_STREQ(xfer_last_error(), "xfer_memcpy_batch_async: dsts[1] is NULL");
    dsts[1] = c;
    srcs[2] = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_STREQ(xfer_last_error(), "xfer_memcpy_batch_async: srcs[2] is NULL");
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_batch_async(ctx, nullptr, srcs, sizes, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_batch_async(ctx, dsts, nullptr, sizes, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT,
                xfer_memcpy_batch_async(ctx, dsts, srcs, nullptr, 3, XFER_COPY_HOST_TO_HOST, stream));
    EXPECT_EQ(mockfull_calls(), calls);
    EXPECT_EQ(b[0], 0); // nothing was copied
    EXPECT_EQ(c[0], 0);
}

TEST_F(Buffers, ContextAndDeviceInfo) {
    xfer_context_info info{};
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_info(ctx, &info));
    EXPECT_STREQ(info.backend, "mockfull");
    EXPECT_EQ(info.device, 0);
    EXPECT_EQ(info.device_kind, XFER_DEVICE_KIND_HOST);
    EXPECT_EQ(info.caps, unsigned(XFER_CAP_ASYNC_COPY));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_context_get_info(ctx, nullptr));
    xfer_device_info dev{};
    ASSERT_XFER(XFER_SUCCESS, xfer_device_get_info(ctx, &dev));
    EXPECT_EQ(dev.ordinal, 0);
    EXPECT_EQ(dev.multiprocessors, 1);
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_device_get_info(ctx, nullptr));
}

TEST(Version, ReportsTheHeaderVersionAndValidates) {
    int major = -1, minor = -1, patch = -1;
    ASSERT_XFER(XFER_SUCCESS, xfer_get_version(&major, &minor, &patch));
    EXPECT_EQ(major, XFER_VERSION_MAJOR);
    EXPECT_EQ(minor, XFER_VERSION_MINOR);
    EXPECT_EQ(patch, XFER_VERSION_PATCH);
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_get_version(&major, nullptr, &patch));
    EXPECT_STREQ(xfer_last_error(), "xfer_get_version: minor is NULL");
}

TEST(StatusString, NamesEveryStatus) {
    EXPECT_STREQ(xfer_status_string(XFER_SUCCESS), "XFER_SUCCESS");
    EXPECT_STREQ(xfer_status_string(XFER_ERROR_OUT_OF_BOUNDS), "XFER_ERROR_OUT_OF_BOUNDS");
    EXPECT_STREQ(xfer_status_string(XFER_ERROR_INTERNAL), "XFER_ERROR_INTERNAL");
    EXPECT_STREQ(xfer_status_string(static_cast<xfer_status>(999)), "XFER_ERROR_UNKNOWN_STATUS");
    for (int s = 0; s <= XFER_ERROR_INTERNAL; ++s) {
        EXPECT_NE(std::string(xfer_status_string(static_cast<xfer_status>(s))), "XFER_ERROR_UNKNOWN_STATUS") << s;
    }
}

} // namespace

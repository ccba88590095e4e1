// SPDX-License-Identifier: Apache-2.0
// Which path each copy took, on every backend: every byte of every copy call is counted under a
// path the backend named (never XFER_PATH_UNREPORTED), the observer's records add up to each
// call, a buffer's own copies take the path of its strategy and never a slow one (so the refuse
// policy lets them through), and the bytes still arrive.
#include <map>
#include <string>
#include <vector>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class CopyPaths : public ContractTest {
  protected:
    xfer_context_stats stats() {
        xfer_context_stats s{};
        s.struct_size = sizeof s;
        EXPECT_XFER_OK(xfer_context_get_stats(ctx_, &s));
        return s;
    }
    static std::uint64_t all_bytes(const xfer_context_stats &s) {
        std::uint64_t n = 0;
        for (int p = 0; p < XFER_PATH_COUNT; ++p) n += s.paths[p].bytes;
        return n;
    }
};

// The path a buffer's own copies take on each of the five backends (as far as that does not
// depend on the size: the pageable backend's staged_min_bytes decides there).
const std::map<std::string, xfer_copy_path> &buffer_paths() {
    static const std::map<std::string, xfer_copy_path> paths = {
        {"host", XFER_PATH_HOST_MEMCPY}, {"pinned", XFER_PATH_PINNED_DMA}, {"zerocopy", XFER_PATH_MAPPED}};
    return paths;
}

struct Collected {
    std::vector<xfer_copy_record> records;
    static void observe(const xfer_copy_record *r, void *self) {
        static_cast<Collected *>(self)->records.push_back(*r);
    }
};

TEST_P(CopyPaths, EveryByteOfAMixOfCopiesIsCountedUnderANamedPath) {
    const std::size_t big = 24u << 20, small = 4096;
    xfer_buffer b = alloc(big);
    ASSERT_NE(b, nullptr);
    const Bytes data = random_bytes(big, 901);
    write_host(b, 0, data);
    ASSERT_XFER_OK(xfer_context_reset_stats(ctx_));

    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_DEVICE, 0, big, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_)); // the blocking copy below is on no stream of ours
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, small));
    Bytes user = random_bytes(big, 902), back(big);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), user.data(), big, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), small, XFER_COPY_DEVICE_TO_HOST, stream_));
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < 16; ++i) {
        dsts.push_back(back.data() + small + i * 256);
        srcs.push_back(static_cast<const unsigned char *>(xfer_device_ptr(b)) + i * 512);
        sizes.push_back(100 + i);
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), sizes.data(), dsts.size(),
                                           XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    for (std::size_t i = 0; i < 16; ++i) ASSERT_EQ(back[small + i * 256], user[i * 512]) << "entry " << i;
    ASSERT_TRUE(same_bytes(Bytes(user.begin(), user.begin() + small), Bytes(back.begin(), back.begin() + small)));

    std::uint64_t batch_bytes = 0;
    for (std::size_t z : sizes) batch_bytes += z;
    const xfer_context_stats s = stats();
    EXPECT_EQ(s.calls, 5u);
    EXPECT_EQ(s.paths[XFER_PATH_UNREPORTED].bytes, 0u) << "backend " << backend() << " left bytes unreported";
    EXPECT_EQ(all_bytes(s), big + small + big + small + batch_bytes);
    std::uint64_t copies = 0;
    for (int p = 0; p < XFER_PATH_COUNT; ++p) copies += s.paths[p].copies;
    EXPECT_GE(copies, 4u + sizes.size()); // pieces may split a copy, never merge two
    if (backend() == "host") {
        EXPECT_EQ(s.paths[XFER_PATH_HOST_MEMCPY].copies, 4u + sizes.size());
        EXPECT_EQ(s.paths[XFER_PATH_HOST_MEMCPY].bytes, all_bytes(s));
        EXPECT_GT(s.paths[XFER_PATH_HOST_MEMCPY].host_ns, 0u);
    }
    if (backend() == "host") EXPECT_EQ(s.slow_copies, 0u);
}

TEST_P(CopyPaths, ABuffersOwnCopiesTakeItsStrategysPathAndAreNeverRefusedAsSlow) {
    ASSERT_XFER_OK(xfer_context_set_slow_path(ctx_, XFER_SLOW_PATH_REFUSE));
    const std::size_t bytes = 8u << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    Collected seen;
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, &Collected::observe, &seen));
    const Bytes data = random_bytes(bytes, 903);
    write_host(b, 0, data);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, bytes));
    if (!shared_view()) write_host(b, 0, Bytes(bytes, 0));
    ASSERT_XFER_OK(xfer_copy_async(b, XFER_TO_HOST, 0, bytes, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data, read_host(b, 0, bytes)));
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, nullptr, nullptr));
    ASSERT_FALSE(seen.records.empty());
    std::uint64_t moved = 0;
    for (const xfer_copy_record &r : seen.records) {
        EXPECT_EQ(r.ctx, ctx_);
        EXPECT_EQ(r.slow, 0) << xfer_copy_path_name(r.path);
        EXPECT_NE(r.path, XFER_PATH_UNREPORTED);
        EXPECT_GT(r.copies, 0u);
        EXPECT_EQ(r.call_bytes, bytes);
        moved += r.bytes;
        const auto it = buffer_paths().find(backend());
        if (it != buffer_paths().end() && std::string(r.function).rfind("xfer_copy", 0) == 0) {
            EXPECT_EQ(r.path, it->second) << backend() << ": " << xfer_copy_path_name(r.path);
        }
    }
    EXPECT_EQ(moved, 2 * bytes);
    EXPECT_EQ(stats().refused_calls, 0u);
}

TEST_P(CopyPaths, TheObserversRecordsAddUpToEachCall) {
    const std::size_t bytes = 1u << 20;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    Collected seen;
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, &Collected::observe, &seen));
    Bytes user = random_bytes(bytes, 904);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), user.data(), bytes, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    ASSERT_FALSE(seen.records.empty());
    std::uint64_t sum = 0;
    for (const xfer_copy_record &r : seen.records) {
        EXPECT_STREQ(r.function, "xfer_memcpy_async");
        EXPECT_EQ(r.stream, stream_);
        EXPECT_EQ(r.kind, XFER_COPY_HOST_TO_DEVICE);
        EXPECT_EQ(r.call_bytes, bytes);
        EXPECT_EQ(r.struct_size, sizeof(xfer_copy_record));
        sum += r.bytes;
    }
    EXPECT_EQ(sum, bytes);
    const std::size_t records = seen.records.size();
    ASSERT_XFER_OK(xfer_set_copy_observer(ctx_, nullptr, nullptr));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), user.data(), bytes, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(seen.records.size(), records);
}

TEST_P(CopyPaths, RegistrationsAreCountedWithTheirBytes) {
    const std::size_t bytes = 2u << 20;
    std::vector<unsigned char> user(bytes + 4096);
    auto *range = reinterpret_cast<unsigned char *>((reinterpret_cast<std::uintptr_t>(user.data()) + 4095) & ~4095ul);
    ASSERT_XFER_OK(xfer_context_reset_stats(ctx_));
    const xfer_status st = xfer_register(ctx_, range, bytes, XFER_REGISTER_DEFAULT);
    if (st == XFER_ERROR_NOT_SUPPORTED) GTEST_SKIP() << backend() << " has no registration";
    ASSERT_XFER_OK(st);
    ASSERT_XFER_OK(xfer_unregister(ctx_, range));
    const xfer_context_stats s = stats();
    EXPECT_GE(s.registrations, 1u); // a CUDA backend may lock a range in pieces
    EXPECT_EQ(s.registered_bytes, bytes);
    EXPECT_GE(s.unregistrations, 1u);
    EXPECT_EQ(s.unregistered_bytes, bytes);
}

XFER_CONTRACT_SUITE(CopyPaths);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// xfer_register / xfer_unregister / xfer_registration_get_stats on every backend (the host
// backend keeps the books only; CUDA backends page-lock with cudaHostRegister), and
// xfer_memcpy_batch_async batches that the CUDA backends pack (small entries of mixed sizes,
// random scatter without overlaps, both directions, pageable and registered host memory).
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class Registration : public ContractTest {
  protected:
    xfer_registration_stats stats() {
        xfer_registration_stats s{};
        EXPECT_XFER_OK(xfer_registration_get_stats(ctx_, &s));
        return s;
    }
};

// Page-aligned memory the test owns (std::aligned_alloc needs a multiple of the alignment).
struct UserMemory {
    explicit UserMemory(std::size_t n)
        : bytes(n), data(static_cast<unsigned char *>(std::aligned_alloc(4096, round(n)))) {}
    ~UserMemory() { std::free(data); }
    static std::size_t round(std::size_t n) { return (n + 4095) / 4096 * 4096; }
    std::size_t bytes;
    unsigned char *data;
};

TEST_P(Registration, RegisterCopyUnregisterRoundTrips) {
    const std::size_t bytes = 3u << 20;
    UserMemory user(bytes);
    const Bytes src = random_bytes(bytes, 801);
    std::copy(src.begin(), src.end(), user.data);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, bytes, XFER_REGISTER_DEFAULT));
    xfer_registration_stats s = stats();
    EXPECT_EQ(s.registered_ranges, 1u);
    EXPECT_EQ(s.registered_bytes, bytes);

    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), user.data, bytes, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    std::fill(user.data, user.data + bytes, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, user.data, xfer_device_ptr(b), bytes, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(src.data(), user.data, bytes));

    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
    s = stats();
    EXPECT_EQ(s.registered_ranges, 0u);
    EXPECT_EQ(s.registered_bytes, 0u);
}

// xfer_unregister waits for the context's queued work (xfer.h): once it returns, the caller may
// overwrite and free the memory. The copies are held up by a sleep on the stream; unregistering
// while they are queued must still leave the device with the bytes as they were.
TEST_P(Registration, UnregisterWaitsForQueuedCopiesOfTheRange) {
    const std::size_t bytes = 8u << 20;
    auto *user = new UserMemory(bytes);
    const Bytes src = random_bytes(bytes, 805);
    std::copy(src.begin(), src.end(), user->data);
    ASSERT_XFER_OK(xfer_register(ctx_, user->data, bytes, XFER_REGISTER_DEFAULT));
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    xfer_stream second = new_stream();
    ASSERT_NE(second, nullptr);
    auto &sleep_ms = keep<int>(100);
    const std::size_t half = bytes / 2;
    auto *device = static_cast<unsigned char *>(xfer_device_ptr(b));
    // One half on each of two streams: unregistering waits for every stream of the context.
    for (const auto &[s, offset] : {std::pair<xfer_stream, std::size_t>{stream_, 0}, {second, half}}) {
        ASSERT_XFER_OK(xfer_stream_launch_host_func(s, sleep_ms_host_fn, &sleep_ms));
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device + offset, user->data + offset, half, XFER_COPY_DEFAULT, s));
    }
    ASSERT_XFER_OK(xfer_unregister(ctx_, user->data));
    std::fill(user->data, user->data + bytes, 0);
    delete user; // under AddressSanitizer, a copy still queued would now read freed memory
    Bytes back;
    ASSERT_TRUE(read_device(b, 0, bytes, &back));
    EXPECT_TRUE(same_bytes(src, back));
}

// Waiting for its own stream from a host function would never return.
TEST_P(Registration, UnregisterFromAHostFunctionIsInvalidState) {
    UserMemory user(1 << 16);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, user.bytes, XFER_REGISTER_DEFAULT));
    struct Call {
        xfer_context ctx;
        void *ptr;
        xfer_status status = XFER_SUCCESS;
        std::string message;
    };
    auto &call = keep<Call>(Call{ctx_, user.data});
    ASSERT_XFER_OK(xfer_stream_launch_host_func(
        stream_,
        [](void *p) {
            auto *c = static_cast<Call *>(p);
            c->status = xfer_unregister(c->ctx, c->ptr);
            c->message = xfer_last_error();
        },
        &call));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(call.status, XFER_ERROR_INVALID_STATE) << call.message;
    EXPECT_NE(call.message.find("host function"), std::string::npos) << call.message;
    EXPECT_EQ(stats().registered_ranges, 1u) << "the range stays registered";
    EXPECT_XFER_OK(xfer_unregister(ctx_, user.data));
}

TEST_P(Registration, SameRangeTwiceIsInvalidStateAndKeepsTheFirst) {
    UserMemory user(1u << 20);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, user.bytes, XFER_REGISTER_DEFAULT));
    EXPECT_EQ(xfer_register(ctx_, user.data, user.bytes, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_STATE)
        << xfer_last_error();
    EXPECT_NE(std::string(xfer_last_error()).find("already registered"), std::string::npos) << xfer_last_error();
    // An overlapping range (inside the first) is refused the same way.
    EXPECT_EQ(xfer_register(ctx_, user.data + 4096, 4096, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_STATE)
        << xfer_last_error();
    EXPECT_EQ(stats().registered_ranges, 1u);
    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
    // Unregistered twice: no longer a registered range.
    EXPECT_EQ(xfer_unregister(ctx_, user.data), XFER_ERROR_INVALID_ARGUMENT) << xfer_last_error();
}

TEST_P(Registration, ReadOnlyRangeCopiesToTheDevice) {
    const std::size_t bytes = 256u << 10;
    UserMemory user(bytes);
    const Bytes src = random_bytes(bytes, 802);
    std::copy(src.begin(), src.end(), user.data);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, bytes, XFER_REGISTER_READ_ONLY));
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, xfer_device_ptr(b), user.data, bytes, XFER_COPY_HOST_TO_DEVICE, stream_));
    Bytes back(bytes);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), xfer_device_ptr(b), bytes, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(src, back));
    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
}

TEST_P(Registration, BadArgumentsLeaveNothingRegistered) {
    UserMemory user(8192);
    EXPECT_EQ(xfer_register(ctx_, nullptr, 8192, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_ARGUMENT)
        << xfer_last_error();
    EXPECT_EQ(xfer_register(ctx_, user.data, 0, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_SIZE) << xfer_last_error();
    EXPECT_EQ(xfer_register(ctx_, user.data, 8192, 0x80u), XFER_ERROR_INVALID_ARGUMENT) << xfer_last_error();
    EXPECT_EQ(xfer_register(ctx_, user.data, SIZE_MAX, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_SIZE)
        << xfer_last_error();
    EXPECT_EQ(xfer_register(nullptr, user.data, 8192, XFER_REGISTER_DEFAULT), XFER_ERROR_INVALID_HANDLE)
        << xfer_last_error();
    EXPECT_EQ(xfer_unregister(ctx_, nullptr), XFER_ERROR_INVALID_ARGUMENT) << xfer_last_error();
    EXPECT_EQ(xfer_unregister(ctx_, user.data), XFER_ERROR_INVALID_ARGUMENT) << xfer_last_error();
    EXPECT_EQ(xfer_registration_get_stats(ctx_, nullptr), XFER_ERROR_INVALID_ARGUMENT) << xfer_last_error();
    EXPECT_EQ(stats().registered_ranges, 0u);
}

TEST_P(Registration, CloseUnregistersWhatIsLeft) {
    UserMemory user(1u << 20);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, user.bytes, XFER_REGISTER_DEFAULT));
    ASSERT_XFER_OK(xfer_close(ctx_));
    ctx_ = nullptr;
    // Registering it again on a new context works only if close released it.
    ASSERT_XFER_OK(xfer_open(backend().c_str(), 0, &ctx_));
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &stream_));
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, user.bytes, XFER_REGISTER_DEFAULT));
    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
}

TEST_P(Registration, ManyThreadsCopyFromOneRegisteredRange) {
    const std::size_t bytes = 1u << 20;
    UserMemory user(bytes);
    const Bytes src = random_bytes(bytes, 803);
    std::copy(src.begin(), src.end(), user.data);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, bytes, XFER_REGISTER_READ_ONLY));
    constexpr int kThreads = 8;
    std::vector<xfer_buffer> buffers;
    std::vector<xfer_stream> streams;
    for (int t = 0; t < kThreads; ++t) {
        buffers.push_back(alloc(bytes));
        ASSERT_NE(buffers.back(), nullptr);
        streams.push_back(new_stream());
    }
    std::vector<std::thread> threads;
    std::vector<xfer_status> result(kThreads, XFER_SUCCESS);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20 && result[t] == XFER_SUCCESS; ++i) {
                const std::size_t off = (static_cast<std::size_t>(t) * 4099 + i * 65537) % (bytes / 2);
                result[t] = xfer_memcpy_async(ctx_, static_cast<unsigned char *>(xfer_device_ptr(buffers[t])) + off,
                                              user.data + off, bytes / 2, XFER_COPY_HOST_TO_DEVICE, streams[t]);
            }
            if (result[t] == XFER_SUCCESS) result[t] = xfer_stream_synchronize(streams[t]);
        });
    }
    for (auto &th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        ASSERT_XFER_OK(result[t]);
        // Every byte a thread copied is the source's byte at the same offset.
        Bytes back(bytes / 2);
        const std::size_t off = static_cast<std::size_t>(t) * 4099 % (bytes / 2);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(),
                                         static_cast<unsigned char *>(xfer_device_ptr(buffers[t])) + off, back.size(),
                                         XFER_COPY_DEVICE_TO_HOST, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_TRUE(same_bytes(src.data() + off, back.data(), back.size())) << "thread " << t;
    }
    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
}

// ---------------------------------------------------------------- packed batches

class PackedBatch : public ContractTest {
  protected:
    // `count` entries of sizes 1 B .. max_entry (mixed, some above the CUDA backends' default
    // pack threshold of 32 KiB), scattered at random non-overlapping places of a device buffer
    // and of host memory `host`; H2D then D2H into fresh host memory, compared byte for byte.
    void round_trip(unsigned char *host, std::size_t host_bytes, std::size_t count, std::uint64_t seed) {
        std::mt19937_64 rng(seed);
        std::vector<std::size_t> sizes(count);
        for (auto &z : sizes) {
            const int pick = static_cast<int>(rng() % 10);
            z = pick < 6 ? 4096 : pick < 8 ? 1 + rng() % 4096 : pick < 9 ? 1 + rng() % 32768 : 32768 + rng() % 65536;
        }
        const std::size_t total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
        ASSERT_LE(total, host_bytes);
        xfer_buffer dev = alloc(total);
        ASSERT_NE(dev, nullptr);
        // Random permutation of slots: entry i goes to device offset dev_off[i] and host offset
        // host_off[i]; both layouts are packings of the same sizes in different orders.
        auto layout = [&](std::uint64_t s) {
            std::vector<std::size_t> order(count), off(count);
            std::iota(order.begin(), order.end(), 0);
            std::shuffle(order.begin(), order.end(), std::mt19937_64(s));
            std::size_t at = 0;
            for (std::size_t k : order) {
                off[k] = at;
                at += sizes[k];
            }
            return off;
        };
        const auto dev_off = layout(seed + 1);
        const auto host_off = layout(seed + 2);
        const Bytes data = random_bytes(total, seed + 3);
        std::copy(data.begin(), data.end(), host);
        auto *d = static_cast<unsigned char *>(xfer_device_ptr(dev));
        std::vector<void *> dsts(count);
        std::vector<const void *> srcs(count);
        for (std::size_t i = 0; i < count; ++i) {
            dsts[i] = d + dev_off[i];
            srcs[i] = host + host_off[i];
        }
        ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), sizes.data(), count,
                                               XFER_COPY_HOST_TO_DEVICE, stream_));
        Bytes back(total);
        std::vector<void *> back_dsts(count);
        std::vector<const void *> back_srcs(count);
        for (std::size_t i = 0; i < count; ++i) {
            back_dsts[i] = back.data() + host_off[i];
            back_srcs[i] = d + dev_off[i];
        }
        ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, back_dsts.data(), back_srcs.data(), sizes.data(), count,
                                               XFER_COPY_DEVICE_TO_HOST, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        EXPECT_TRUE(same_bytes(data, back));
        // The device holds entry i at dev_off[i]: one plain copy of the whole buffer shows it.
        Bytes whole(total);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, whole.data(), d, total, XFER_COPY_DEVICE_TO_HOST, stream_));
        ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
        for (std::size_t i = 0; i < count; ++i) {
            ASSERT_TRUE(same_bytes(data.data() + host_off[i], whole.data() + dev_off[i], sizes[i])) << "entry " << i;
        }
    }
};

TEST_P(PackedBatch, MixedSizesRandomScatterFromPageableMemory) {
    const std::size_t bytes = 48u << 20;
    UserMemory user(bytes);
    round_trip(user.data, bytes, 3000, 901);
}

TEST_P(PackedBatch, MixedSizesRandomScatterFromRegisteredMemory) {
    const std::size_t bytes = 48u << 20;
    UserMemory user(bytes);
    ASSERT_XFER_OK(xfer_register(ctx_, user.data, bytes, XFER_REGISTER_DEFAULT));
    round_trip(user.data, bytes, 3000, 902);
    ASSERT_XFER_OK(xfer_unregister(ctx_, user.data));
}

TEST_P(PackedBatch, FourThousandPagesEachWay) {
    const std::size_t count = 4096;
    xfer_buffer dev = alloc(count * 4096);
    ASSERT_NE(dev, nullptr);
    UserMemory user(count * 4096);
    const Bytes data = random_bytes(count * 4096, 903);
    std::copy(data.begin(), data.end(), user.data);
    std::vector<std::size_t> sizes(count, 4096), order(count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(904));
    std::vector<void *> dsts(count);
    std::vector<const void *> srcs(count);
    auto *d = static_cast<unsigned char *>(xfer_device_ptr(dev));
    for (std::size_t i = 0; i < count; ++i) {
        dsts[i] = d + order[i] * 4096;
        srcs[i] = user.data + i * 4096;
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, dsts.data(), srcs.data(), sizes.data(), count,
                                           XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    std::fill(user.data, user.data + count * 4096, 0);
    std::vector<void *> back_dsts(count);
    std::vector<const void *> back_srcs(count);
    for (std::size_t i = 0; i < count; ++i) {
        back_dsts[i] = user.data + i * 4096;
        back_srcs[i] = d + order[i] * 4096;
    }
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, back_dsts.data(), back_srcs.data(), sizes.data(), count,
                                           XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(data.data(), user.data, data.size()));
}

XFER_CONTRACT_SUITE(Registration);
XFER_CONTRACT_SUITE(PackedBatch);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// Bad arguments: NULL outputs, zero and overflowing sizes, ranges past the end, unknown enum
// and flag values, misuse of events, batches with a bad entry, out of memory, unknown
// backends and devices. Each gets its specific status and a message that names the problem;
// afterwards the same objects still work.
#include <cstdint>
#include <limits>
#include <string>

#include "contract_fixture.hpp"

namespace xfer::test::contract {
namespace {

class BadArguments : public ContractTest {
  protected:
    void SetUp() override {
        ContractTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        buf_ = alloc(kBytes);
        ASSERT_NE(buf_, nullptr);
    }

    void expect_state_intact() { EXPECT_TRUE(round_trip(buf_, random_bytes(kBytes, 888), stream_)); }

    static constexpr std::size_t kBytes = 10000;
    xfer_buffer buf_ = nullptr;
};

void noop_host_fn(void *) {}

TEST_P(BadArguments, NullOutputPointers) {
    EXPECT_XFER_FAILS(xfer_open(backend().c_str(), 0, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"ctx", "NULL"});
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, 64, 0, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"buf", "NULL"});
    EXPECT_XFER_FAILS(xfer_stream_create(ctx_, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"NULL"});
    EXPECT_XFER_FAILS(xfer_event_create(ctx_, 0, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"NULL"});
    EXPECT_XFER_FAILS(xfer_context_get_info(ctx_, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"info", "NULL"});
    EXPECT_XFER_FAILS(xfer_device_get_info(ctx_, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"info", "NULL"});
    EXPECT_XFER_FAILS(xfer_backend_count(nullptr), XFER_ERROR_INVALID_ARGUMENT, {"count", "NULL"});
    EXPECT_XFER_FAILS(xfer_backend_get_info(0, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"info", "NULL"});
    EXPECT_XFER_FAILS(xfer_param_count(nullptr), XFER_ERROR_INVALID_ARGUMENT, {"count", "NULL"});
    int major = 0;
    EXPECT_XFER_FAILS(xfer_get_version(&major, nullptr, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"NULL"});
    xfer_event e = new_event();
    ASSERT_NE(e, nullptr);
    ASSERT_XFER_OK(xfer_event_record(e, stream_));
    ASSERT_XFER_OK(xfer_event_synchronize(e));
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(e, e, nullptr), XFER_ERROR_INVALID_ARGUMENT, {"ms", "NULL"});
    expect_state_intact();
}

TEST_P(BadArguments, BackendInfoIndexOutOfRange) {
    int count = 0;
    ASSERT_XFER_OK(xfer_backend_count(&count));
    xfer_backend_info info{};
    EXPECT_XFER_FAILS(xfer_backend_get_info(count, &info), XFER_ERROR_INVALID_ARGUMENT, {"index"});
    EXPECT_XFER_FAILS(xfer_backend_get_info(-1, &info), XFER_ERROR_INVALID_ARGUMENT, {"index"});
    expect_state_intact();
}

TEST_P(BadArguments, ZeroSizes) {
    xfer_buffer b = nullptr;
    int dst = 0, src = 1;
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, 0, 0, &b), XFER_ERROR_INVALID_SIZE, {"bytes"});
    EXPECT_EQ(b, nullptr);
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 0, 0, stream_), XFER_ERROR_INVALID_SIZE, {"bytes"});
    EXPECT_XFER_FAILS(xfer_copy(buf_, XFER_TO_HOST, 0, 0), XFER_ERROR_INVALID_SIZE, {"bytes"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, &dst, &src, 0, XFER_COPY_HOST_TO_HOST, stream_), XFER_ERROR_INVALID_SIZE,
                      {"bytes"});
    expect_state_intact();
}

TEST_P(BadArguments, RangePastTheEndOfTheBuffer) {
    const Bytes data = random_bytes(kBytes, 701);
    write_host(buf_, 0, data);
    ASSERT_XFER_OK(xfer_copy(buf_, XFER_TO_DEVICE, 0, kBytes));
    const Bytes other = random_bytes(kBytes, 702);
    write_host(buf_, 0, other);
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, kBytes, 1, stream_), XFER_ERROR_OUT_OF_BOUNDS, {"offset"});
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, kBytes - 10, 11, stream_), XFER_ERROR_OUT_OF_BOUNDS,
                      {"offset"});
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_HOST, 0, kBytes + 1, stream_), XFER_ERROR_OUT_OF_BOUNDS,
                      {"offset"});
    EXPECT_XFER_FAILS(xfer_copy(buf_, XFER_TO_DEVICE, 1, kBytes), XFER_ERROR_OUT_OF_BOUNDS, {"offset"});
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    if (!shared_view()) {
        // Nothing of a rejected copy ran: the device view still holds the first bytes.
        Bytes device;
        ASSERT_TRUE(read_device(buf_, 0, kBytes, &device));
        EXPECT_TRUE(same_bytes(data, device));
    }
    expect_state_intact();
}

TEST_P(BadArguments, RangeThatOverflowsSizeT) {
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, max, 2, stream_), XFER_ERROR_INVALID_SIZE, {"overflow"});
    EXPECT_XFER_FAILS(xfer_copy_async(buf_, XFER_TO_DEVICE, 1, max, stream_), XFER_ERROR_INVALID_SIZE, {"overflow"});
    EXPECT_XFER_FAILS(xfer_copy(buf_, XFER_TO_HOST, max / 2 + 1, max / 2 + 1), XFER_ERROR_INVALID_SIZE, {"overflow"});
    expect_state_intact();
}

// Sizes no memory can have are refused before anything is queued (accepted, they would crash
// a worker later).
TEST_P(BadArguments, ImpossibleSizesAreRefusedBeforeAnythingIsQueued) {
    const std::size_t max = std::numeric_limits<std::size_t>::max();
    const std::size_t past_any_object = static_cast<std::size_t>(PTRDIFF_MAX) + 1;
    void *dst = xfer_device_ptr(buf_);
    const void *src = xfer_host_ptr(buf_);
    for (xfer_copy_kind kind : {XFER_COPY_HOST_TO_DEVICE, XFER_COPY_DEFAULT}) {
        EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, dst, src, max, kind, stream_), XFER_ERROR_INVALID_SIZE, {"largest"});
        EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, dst, src, past_any_object, kind, stream_), XFER_ERROR_INVALID_SIZE,
                          {"largest"});
    }
    // A range that wraps around the end of the address space.
    auto *near_end = reinterpret_cast<void *>(UINTPTR_MAX - 15);
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, near_end, src, 64, XFER_COPY_DEFAULT, stream_), XFER_ERROR_INVALID_SIZE,
                      {"dst", "wraps"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, dst, near_end, 64, XFER_COPY_DEFAULT, stream_), XFER_ERROR_INVALID_SIZE,
                      {"src", "wraps"});
    // Batches: one impossible entry, and entries that are each possible but add up past any object.
    const std::size_t half = static_cast<std::size_t>(PTRDIFF_MAX) / 2 + 1;
    void *dsts[3] = {dst, dst, dst};
    const void *srcs[3] = {src, src, src};
    const std::size_t one_max[3] = {16, max, 16};
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, dsts, srcs, one_max, 3, XFER_COPY_DEFAULT, stream_),
                      XFER_ERROR_INVALID_SIZE, {"entry 1"});
    const std::size_t sum_overflows[3] = {16, half, half};
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, dsts, srcs, sum_overflows, 3, XFER_COPY_DEFAULT, stream_),
                      XFER_ERROR_INVALID_SIZE, {"add up"});
    const std::size_t sum_wraps_size_t[3] = {max / 2 + 1, max / 2 + 1, 16};
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, dsts, srcs, sum_wraps_size_t, 3, XFER_COPY_DEFAULT, stream_),
                      XFER_ERROR_INVALID_SIZE, {"entry 0"});
    xfer_buffer huge = nullptr;
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, max, 0, &huge), XFER_ERROR_INVALID_SIZE, {"largest"});
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, past_any_object, 0, &huge), XFER_ERROR_INVALID_SIZE, {"largest"});
    EXPECT_EQ(huge, nullptr);
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    expect_state_intact();
}

// Values stay inside the enums' range (0..0x7fffffff, fixed by the *_FORCE_INT32 members):
// converting anything else to the enum is undefined in C++, though a C caller may pass it.
TEST_P(BadArguments, UnknownDirection) {
    for (int dir : {0, 3, 42, 0x7ffffffe}) {
        EXPECT_XFER_FAILS(xfer_copy_async(buf_, static_cast<xfer_direction>(dir), 0, kBytes, stream_),
                          XFER_ERROR_INVALID_ARGUMENT, {"dir"})
            << "dir " << dir;
        EXPECT_XFER_FAILS(xfer_copy(buf_, static_cast<xfer_direction>(dir), 0, kBytes), XFER_ERROR_INVALID_ARGUMENT,
                          {"dir"});
    }
    expect_state_intact();
}

TEST_P(BadArguments, UnknownAllocFlags) {
    xfer_buffer b = nullptr;
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, 64, 0x80, &b), XFER_ERROR_INVALID_ARGUMENT, {"flags"});
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, 64, 0x80000000u | XFER_ALLOC_READ_MOSTLY, &b), XFER_ERROR_INVALID_ARGUMENT,
                      {"flags"});
    EXPECT_EQ(b, nullptr);
    expect_state_intact();
}

TEST_P(BadArguments, PreferDeviceTogetherWithPreferHost) {
    xfer_buffer b = nullptr;
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, 64, XFER_ALLOC_PREFER_DEVICE | XFER_ALLOC_PREFER_HOST, &b),
                      XFER_ERROR_INVALID_ARGUMENT, {"PREFER_DEVICE", "PREFER_HOST"});
    EXPECT_EQ(b, nullptr);
    expect_state_intact();
}

TEST_P(BadArguments, UnknownEventFlags) {
    xfer_event e = nullptr;
    EXPECT_XFER_FAILS(xfer_event_create(ctx_, 0x2, &e), XFER_ERROR_INVALID_ARGUMENT, {"flags"});
    EXPECT_XFER_FAILS(xfer_event_create(ctx_, 0x100 | XFER_EVENT_DISABLE_TIMING, &e), XFER_ERROR_INVALID_ARGUMENT,
                      {"flags"});
    EXPECT_EQ(e, nullptr);
    expect_state_intact();
}

TEST_P(BadArguments, ElapsedOfAnEventNeverRecorded) {
    xfer_event recorded = new_event();
    xfer_event never = new_event();
    ASSERT_NE(recorded, nullptr);
    ASSERT_NE(never, nullptr);
    ASSERT_XFER_OK(xfer_event_record(recorded, stream_));
    ASSERT_XFER_OK(xfer_event_synchronize(recorded));
    float ms = -1.0f;
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(recorded, never, &ms), XFER_ERROR_INVALID_STATE, {"record"});
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(never, recorded, &ms), XFER_ERROR_INVALID_STATE, {"record"});
    EXPECT_EQ(ms, -1.0f);
    EXPECT_XFER_OK(xfer_event_elapsed_ms(recorded, recorded, &ms));
    EXPECT_EQ(ms, 0.0f);
    expect_state_intact();
}

TEST_P(BadArguments, ElapsedOfAnEventWithoutTiming) {
    xfer_event timed = new_event();
    xfer_event untimed = new_event(XFER_EVENT_DISABLE_TIMING);
    ASSERT_NE(timed, nullptr);
    ASSERT_NE(untimed, nullptr);
    ASSERT_XFER_OK(xfer_event_record(timed, stream_));
    ASSERT_XFER_OK(xfer_event_record(untimed, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    float ms = -1.0f;
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(timed, untimed, &ms), XFER_ERROR_INVALID_STATE, {"timing"});
    EXPECT_XFER_FAILS(xfer_event_elapsed_ms(untimed, timed, &ms), XFER_ERROR_INVALID_STATE, {"timing"});
    EXPECT_EQ(ms, -1.0f);
    expect_state_intact();
}

TEST_P(BadArguments, NullHostFunction) {
    EXPECT_XFER_FAILS(xfer_stream_launch_host_func(stream_, nullptr, nullptr), XFER_ERROR_INVALID_ARGUMENT,
                      {"fn", "NULL"});
    EXPECT_XFER_OK(xfer_stream_launch_host_func(stream_, noop_host_fn, nullptr));
    expect_state_intact();
}

TEST_P(BadArguments, MemcpyWithNullPointerOrUnknownKind) {
    int dst = 0, src = 1;
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, nullptr, &src, sizeof src, XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"dst", "NULL"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, &dst, nullptr, sizeof dst, XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"src", "NULL"});
    for (int kind : {5, 42, 0x7ffffffe}) {
        EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, &dst, &src, sizeof dst, static_cast<xfer_copy_kind>(kind), stream_),
                          XFER_ERROR_INVALID_ARGUMENT, {"kind"})
            << "kind " << kind;
    }
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_EQ(dst, 0) << "a rejected copy must not run";
    expect_state_intact();
}

// A batch of `count` valid host-to-host copies, for tests to spoil one entry of.
struct Batch {
    explicit Batch(std::size_t count) : src(random_bytes(count * 16, 703)), dst(count * 16) {
        for (std::size_t i = 0; i < count; ++i) {
            dsts.push_back(dst.data() + 16 * i);
            srcs.push_back(src.data() + 16 * i);
            sizes.push_back(16);
        }
    }
    Bytes src, dst;
    std::vector<void *> dsts;
    std::vector<const void *> srcs;
    std::vector<std::size_t> sizes;
};

// Copies between overlapping ranges are refused on every backend before anything is queued
// (memcpy and cudaMemcpy leave them undefined). Ranges that only touch are fine.
TEST_P(BadArguments, OverlappingRangesAreRefusedAndTouchingOnesCopy) {
    auto &host = keep<Bytes>(random_bytes(1 << 16, 121));
    const Bytes before = host;
    unsigned char *h = host.data();
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, h + 100, h, 1000, XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"overlap", "900"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, h, h + 100, 1000, XFER_COPY_DEFAULT, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"overlap"});
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, h, h, 1, XFER_COPY_HOST_TO_HOST, stream_), XFER_ERROR_INVALID_ARGUMENT,
                      {"overlap"});
    const std::size_t bytes = 1 << 16;
    xfer_buffer b = alloc(bytes);
    ASSERT_NE(b, nullptr);
    auto *d = static_cast<unsigned char *>(xfer_device_ptr(b));
    EXPECT_XFER_FAILS(xfer_memcpy_async(ctx_, d + 4096, d, 8192, XFER_COPY_DEVICE_TO_DEVICE, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"overlap"});
    // A batch with one overlapping entry queues nothing, and says which entry.
    auto &out = keep<Bytes>(Bytes(4096, 0));
    void *dsts[2] = {out.data(), h + 10};
    const void *srcs[2] = {h, h};
    const std::size_t sizes[2] = {4096, 20};
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 2, XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"entry 1", "overlap"});
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(Bytes(4096, 0), out)) << "entry 0 of a refused batch was copied";
    EXPECT_TRUE(same_bytes(before, host)) << "a refused copy wrote its destination";
    // Touching, not overlapping: the second half takes the first half's bytes.
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, h + 1000, h, 1000, XFER_COPY_HOST_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(before.data(), h + 1000, 1000));
    EXPECT_TRUE(same_bytes(before.data(), h, 1000));
}

TEST_P(BadArguments, BatchWithANullEntryNamesItsIndex) {
    Batch batch(200);
    batch.dsts[137] = nullptr;
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 200,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"137"});
    batch.dsts[137] = batch.dst.data() + 16 * 137;
    batch.srcs[42] = nullptr;
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 200,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"42"});
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(Bytes(batch.dst.size(), 0), batch.dst)) << "nothing is queued when validation fails";
    expect_state_intact();
}

TEST_P(BadArguments, BatchWithAZeroSizeNamesItsIndex) {
    Batch batch(100);
    batch.sizes[73] = 0;
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 100,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_SIZE, {"73"});
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(Bytes(batch.dst.size(), 0), batch.dst)) << "nothing is queued when validation fails";
    expect_state_intact();
}

TEST_P(BadArguments, BatchWithBadArraysCountOrKind) {
    Batch batch(4);
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, nullptr, batch.srcs.data(), batch.sizes.data(), 4,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"dsts"});
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), nullptr, batch.sizes.data(), 4,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"srcs"});
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), nullptr, 4,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"sizes"});
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 0,
                                              XFER_COPY_HOST_TO_HOST, stream_),
                      XFER_ERROR_INVALID_SIZE, {"count"});
    EXPECT_XFER_FAILS(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 4,
                                              static_cast<xfer_copy_kind>(9), stream_),
                      XFER_ERROR_INVALID_ARGUMENT, {"kind"});
    ASSERT_XFER_OK(xfer_memcpy_batch_async(ctx_, batch.dsts.data(), batch.srcs.data(), batch.sizes.data(), 4,
                                           XFER_COPY_HOST_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(same_bytes(batch.src, batch.dst));
    expect_state_intact();
}

TEST_P(BadArguments, OutOfMemoryLeavesTheContextUsable) {
    xfer_buffer huge = nullptr;
    const std::size_t one_pebibyte = std::size_t(1) << 50;
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, one_pebibyte, 0, &huge), XFER_ERROR_OUT_OF_MEMORY, {"memory"});
    EXPECT_EQ(huge, nullptr);
    // Fails again the same way (nothing half-allocated), and normal allocations still work.
    EXPECT_XFER_FAILS(xfer_alloc(ctx_, one_pebibyte, 0, &huge), XFER_ERROR_OUT_OF_MEMORY, {"memory"});
    xfer_buffer after = alloc(1 << 20);
    ASSERT_NE(after, nullptr);
    EXPECT_TRUE(round_trip(after, random_bytes(1 << 20, 704), stream_));
    expect_state_intact();
}

TEST_P(BadArguments, UnknownBackendName) {
    xfer_context c = nullptr;
    EXPECT_XFER_FAILS(xfer_open("no-such-backend", 0, &c), XFER_ERROR_BACKEND_NOT_FOUND, {"no-such-backend"});
    EXPECT_EQ(c, nullptr);
    expect_state_intact();
}

TEST_P(BadArguments, DeviceIndexOutOfRange) {
    int count = 0, devices = 0;
    ASSERT_XFER_OK(xfer_backend_count(&count));
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        ASSERT_XFER_OK(xfer_backend_get_info(i, &info));
        if (backend() == info.name) {
            devices = info.device_count;
        }
    }
    ASSERT_GE(devices, 1);
    xfer_context c = nullptr;
    const std::string first_missing = std::to_string(devices);
    EXPECT_XFER_FAILS(xfer_open(backend().c_str(), devices, &c), XFER_ERROR_NO_DEVICE, {first_missing.c_str()});
    EXPECT_XFER_FAILS(xfer_open(backend().c_str(), 1000000, &c), XFER_ERROR_NO_DEVICE, {"1000000"});
    EXPECT_XFER_FAILS(xfer_open(backend().c_str(), -2, &c), XFER_ERROR_INVALID_ARGUMENT, {"device"});
    EXPECT_EQ(c, nullptr);
    expect_state_intact();
}

XFER_CONTRACT_SUITE(BadArguments);

} // namespace
} // namespace xfer::test::contract

// SPDX-License-Identifier: Apache-2.0
// The pageable staging engine on a GPU: truly asynchronous copies that keep stream order in
// both directions, across streams joined by events, when memory is freed or a stream is
// destroyed with staging in flight, and with many threads at once. Every byte is compared.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "staged_fixture.hpp"

namespace {

using namespace xfer::test;

constexpr std::size_t MiB = std::size_t{1} << 20;

// Holds a stream at a host function until opened (or 20 s pass, so a bug cannot hang CI).
class StreamHold {
  public:
    xfer_status block(xfer_stream s) { return xfer_stream_launch_host_func(s, &StreamHold::wait_here, this); }
    void open() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            open_ = true;
        }
        changed_.notify_all();
    }
    bool timed_out() const { return timed_out_.load(); }

  private:
    static void wait_here(void *self) {
        auto *h = static_cast<StreamHold *>(self);
        std::unique_lock<std::mutex> lock(h->mutex_);
        if (!h->changed_.wait_for(lock, std::chrono::seconds(20), [h] { return h->open_; })) {
            h->timed_out_ = true;
        }
    }
    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
    std::atomic<bool> timed_out_{false};
};

class GpuStagingEngine : public StagedCopyTest {
  protected:
    void *device_alloc(std::size_t n) {
        void *p = nullptr;
        EXPECT_EQ(cudaSuccess, cudaMalloc(&p, n));
        owned_.push_back(p);
        return p;
    }
    void TearDown() override {
        for (void *p : owned_) {
            EXPECT_EQ(cudaSuccess, cudaFree(p));
        }
        StagedCopyTest::TearDown();
    }
    std::vector<void *> owned_;
};

// Only staging = async returns while a held stream has not reached the copy: these run on the
// asynchronous cases alone (a skip would count as a failure on the GPU machine).
class GpuStagingEngineAsync : public GpuStagingEngine {};

inline const StagingCase kAsyncStagingCases[] = {kStagingCases[1], kStagingCases[2]};

TEST_P(GpuStagingEngineAsync, RawCopyReturnsBeforeItRunsAndTheStreamWaitsForIt) {
    const std::size_t n = 64 * MiB + 17;
    const auto data = random_bytes(n, fresh_seed());
    std::vector<unsigned char> host = data;
    void *device = device_alloc(n);
    StreamHold hold;
    ASSERT_XFER_OK(hold.block(stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, host.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    EXPECT_EQ(XFER_ERROR_NOT_READY, xfer_stream_query(stream_)) << "the stream did not wait for the staged copy";
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), device, n, XFER_COPY_DEVICE_TO_HOST, stream_));
    hold.open();
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_FALSE(hold.timed_out()) << "a call waited for the held stream";
    EXPECT_TRUE(read_device(device, n) == data) << "H2D";
    EXPECT_TRUE(back == data) << "D2H queued behind the H2D";
}

TEST_P(GpuStagingEngine, ToHostThenToDeviceOfOneHostRangeOnOneStream) {
    const std::size_t n = 3 * chunk() + 4097;
    const auto first = random_bytes(n, fresh_seed());
    void *a = device_alloc(n);
    void *b = device_alloc(n);
    write_device(a, first);
    std::vector<unsigned char> host(n, 0x11);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, host.data(), a, n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, b, host.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    // A small copy of the same range too: the driver would read it at call time, before the
    // to-host copy above has landed, unless the engine orders it.
    void *c = device_alloc(4096);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, c, host.data(), 4096, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(host == first) << "D2H";
    EXPECT_TRUE(read_device(b, n) == first) << "H2D sent the host range before the D2H had landed";
    EXPECT_TRUE(read_device(c, 4096) == std::vector<unsigned char>(first.begin(), first.begin() + 4096))
        << "a small H2D overtook the D2H";
}

TEST_P(GpuStagingEngineAsync, TwoStreamsJoinedByAnEvent) {
    const std::size_t n = 24 * MiB + 5;
    const auto data = random_bytes(n, fresh_seed());
    std::vector<unsigned char> host = data;
    void *device = device_alloc(n);
    xfer_stream other = nullptr;
    xfer_event done = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &other));
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DISABLE_TIMING, &done));
    StreamHold hold;
    ASSERT_XFER_OK(hold.block(stream_)); // so the second stream would overtake without the event
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, host.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_event_record(done, stream_));
    ASSERT_XFER_OK(xfer_stream_wait_event(other, done));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), device, n, XFER_COPY_DEVICE_TO_HOST, other));
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        hold.open();
    });
    ASSERT_XFER_OK(xfer_stream_synchronize(other));
    opener.join();
    EXPECT_TRUE(back == data) << "the second stream read the device before the first stream's copy landed";
    EXPECT_XFER_OK(xfer_event_destroy(done));
    EXPECT_XFER_OK(xfer_stream_destroy(other));
}

TEST_P(GpuStagingEngineAsync, FreeAndStreamDestroyWhileStagingIsInFlight) {
    const std::size_t n = 32 * MiB + 3;
    const auto data = random_bytes(n, fresh_seed());
    // A buffer freed while its copy is queued behind a held stream: the free waits.
    {
        xfer_buffer buf = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, n, XFER_ALLOC_DEFAULT, &buf));
        std::memcpy(xfer_host_ptr(buf), data.data(), n);
        StreamHold hold;
        ASSERT_XFER_OK(hold.block(stream_));
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_DEVICE, 0, n, stream_));
        ASSERT_XFER_OK(xfer_copy_async(buf, XFER_TO_HOST, 0, n, stream_));
        std::thread opener([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            hold.open();
        });
        EXPECT_XFER_OK(xfer_free(buf));
        opener.join();
        EXPECT_FALSE(hold.timed_out());
    }
    // A stream destroyed with a staged copy queued: the bytes still arrive.
    {
        xfer_stream s = nullptr;
        ASSERT_XFER_OK(xfer_stream_create(ctx_, &s));
        std::vector<unsigned char> host = data;
        void *device = device_alloc(n);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, device, host.data(), n, XFER_COPY_HOST_TO_DEVICE, s));
        std::vector<unsigned char> back(n, 0);
        ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), device, n, XFER_COPY_DEVICE_TO_HOST, s));
        EXPECT_XFER_OK(xfer_stream_destroy(s));
        EXPECT_TRUE(read_device(device, n) == data);
        EXPECT_TRUE(back == data);
    }
}

TEST_P(GpuStagingEngine, ManyThreadsOnTheirOwnStreamsAndOnOneShared) {
    const std::uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed);
    const int threads = 8;
    const std::size_t n = 6 * MiB + 123;
    xfer_stream shared = nullptr;
    ASSERT_XFER_OK(xfer_stream_create(ctx_, &shared));
    std::atomic<int> mismatches{0};
    std::atomic<int> failures{0};
    std::mutex error_mutex;
    std::string first_error;
    // Device memory is allocated and freed outside the threads: cudaFree waits for the whole
    // device while holding the runtime's lock, so a cudaFree racing staged copies in flight
    // would hold up the engine's own calls (xfer.h says so).
    std::vector<void *> devices;
    for (int i = 0; i < threads + 4; ++i) {
        devices.push_back(device_alloc(n));
    }
    auto run = [&](int id, bool own_stream) {
        xfer_stream s = shared;
        if (own_stream && xfer_stream_create(ctx_, &s) != XFER_SUCCESS) {
            ++failures;
            return;
        }
        void *device = devices[static_cast<std::size_t>(own_stream ? id : threads + id)];
        auto step = [&](xfer_status st) {
            if (st != XFER_SUCCESS) {
                ++failures;
                std::lock_guard<std::mutex> lock(error_mutex);
                first_error = xfer_last_error();
            }
        };
        for (int r = 0; r < 4; ++r) {
            const auto data = random_bytes(n - r * 4096, seed + 1000 * id + r + (own_stream ? 0 : 500));
            std::vector<unsigned char> host = data;
            std::vector<unsigned char> back(data.size(), 0);
            step(xfer_memcpy_async(ctx_, device, host.data(), data.size(), XFER_COPY_HOST_TO_DEVICE, s));
            step(xfer_memcpy_async(ctx_, back.data(), device, data.size(), XFER_COPY_DEVICE_TO_HOST, s));
            step(xfer_stream_synchronize(s));
            mismatches += back != data ? 1 : 0;
        }
        if (own_stream) {
            step(xfer_stream_destroy(s));
        }
    };
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back(run, i, true);
    }
    for (int i = 0; i < 4; ++i) {
        pool.emplace_back(run, i, false);
    }
    for (auto &t : pool) {
        t.join();
    }
    EXPECT_EQ(0, failures.load()) << first_error;
    EXPECT_EQ(0, mismatches.load()) << "a thread got bytes it did not send";
    EXPECT_XFER_OK(xfer_stream_destroy(shared));
}

TEST_P(GpuStagingEngine, KernelBetweenStagedCopiesSeesAndIsSeen) {
    // H2D staged, then device work on the stream (a device-to-device copy standing in for a
    // kernel), then D2H staged: each waits for the one before.
    const std::size_t n = 16 * MiB + 9;
    const auto data = random_bytes(n, fresh_seed());
    std::vector<unsigned char> host = data;
    void *a = device_alloc(n);
    void *b = device_alloc(n);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, a, host.data(), n, XFER_COPY_HOST_TO_DEVICE, stream_));
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, b, a, n, XFER_COPY_DEVICE_TO_DEVICE, stream_));
    std::vector<unsigned char> back(n, 0);
    ASSERT_XFER_OK(xfer_memcpy_async(ctx_, back.data(), b, n, XFER_COPY_DEVICE_TO_HOST, stream_));
    ASSERT_XFER_OK(xfer_stream_synchronize(stream_));
    EXPECT_TRUE(back == data);
}

INSTANTIATE_TEST_SUITE_P(Pageable, GpuStagingEngine, ::testing::ValuesIn(kStagingCases), staging_case_name);
INSTANTIATE_TEST_SUITE_P(Pageable, GpuStagingEngineAsync, ::testing::ValuesIn(kAsyncStagingCases), staging_case_name);

} // namespace

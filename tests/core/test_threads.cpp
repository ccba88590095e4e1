// SPDX-License-Identifier: Apache-2.0
// Many threads at once: data stays correct, races between use and release end in SUCCESS or
// XFER_ERROR_INVALID_HANDLE (never a crash), and nothing leaks.
#include <atomic>
#include <cstring>
#include <thread>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

constexpr int kThreads = 8;

class Threads : public CoreTest {};

bool handle_race_outcome(xfer_status st) { return st == XFER_SUCCESS || st == XFER_ERROR_INVALID_HANDLE; }

TEST_F(Threads, ManyThreadsAllocCopyFreeOnSharedAndOwnContexts) {
    long live = mockfull_live();
    xfer_context shared = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &shared));
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            xfer_context own = nullptr;
            if (xfer_open("mockfull", t % 2, &own) != XFER_SUCCESS) {
                ++errors;
                return;
            }
            for (int i = 0; i < 100; ++i) {
                xfer_context ctx = i % 2 ? own : shared;
                std::size_t n = 1 + std::size_t((t * 7919 + i * 104729) % 5000);
                auto data = random_bytes(n, unsigned(t * 1000 + i));
                xfer_buffer buf = nullptr;
                if (xfer_alloc(ctx, n, 0, &buf) != XFER_SUCCESS) {
                    ++errors;
                    continue;
                }
                auto *host = static_cast<unsigned char *>(xfer_host_ptr(buf));
                std::memcpy(host, data.data(), n);
                if (xfer_copy(buf, XFER_TO_DEVICE, 0, n) != XFER_SUCCESS) ++errors;
                std::memset(host, 0, n);
                if (xfer_copy(buf, XFER_TO_HOST, 0, n) != XFER_SUCCESS) ++errors;
                if (std::memcmp(host, data.data(), n) != 0) ++errors;
                if (xfer_free(buf) != XFER_SUCCESS) ++errors;
            }
            if (xfer_close(own) != XFER_SUCCESS) ++errors;
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(shared));
    EXPECT_EQ(mockfull_live(), live);
}

TEST_F(Threads, RacingFreesOfOneBufferSucceedExactlyOnce) {
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
    const long live = mockfull_live();
    constexpr int kBuffers = 200;
    std::vector<xfer_buffer> bufs(kBuffers);
    for (auto &b : bufs) ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 32, 0, &b));
    std::atomic<int> freed{0}, rejected{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (xfer_buffer b : bufs) {
                xfer_status st = xfer_free(b);
                if (st == XFER_SUCCESS)
                    ++freed;
                else if (st == XFER_ERROR_INVALID_HANDLE)
                    ++rejected;
                else
                    ++other;
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(freed.load(), kBuffers);
    EXPECT_EQ(rejected.load(), 3 * kBuffers);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(mockfull_live(), live);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(Threads, FreeWhileAnotherThreadCopiesEndsCleanly) {
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
    for (int round = 0; round < 50; ++round) {
        xfer_buffer buf = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx, 4096, 0, &buf));
        std::atomic<bool> started{false};
        std::atomic<int> bad{0};
        std::thread user([&] {
            for (int i = 0; i < 1000; ++i) {
                xfer_status st = xfer_copy(buf, i % 2 ? XFER_TO_HOST : XFER_TO_DEVICE, 0, 4096);
                started = true;
                if (!handle_race_outcome(st)) ++bad;
                if (st == XFER_ERROR_INVALID_HANDLE) break;
            }
        });
        while (!started) std::this_thread::yield();
        EXPECT_XFER(XFER_SUCCESS, xfer_free(buf));
        user.join();
        EXPECT_EQ(bad.load(), 0);
    }
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

// xfer_memcpy_async looks its context and stream up without copying their shared_ptr (the
// calling thread's recent lookups keep the records: objects.hpp, lookup_ref). A copying thread
// whose recent lookups hold the stream, racing its destruction and then the context's close
// (a copy holds only its stream's gate, which xfer_close closes before it destroys the context:
// objects.hpp): every call succeeds or says INVALID_HANDLE, and the bytes of every successful
// copy arrived (ASan and TSan runs of this test catch a record, or the mock's context, used
// after it was freed).
TEST_F(Threads, RawCopiesRacingStreamDestroyAndCloseEndCleanly) {
    for (int round = 0; round < 30; ++round) {
        xfer_context ctx = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
        xfer_stream doomed = nullptr;
        xfer_stream kept = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &doomed));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &kept));
        std::atomic<int> copies{0};
        std::atomic<int> bad{0};
        std::thread user([&] {
            unsigned char src[16], dst[16];
            for (int i = 0; i < 4000; ++i) {
                std::memset(src, i & 0xff, sizeof src);
                std::memset(dst, 0, sizeof dst);
                xfer_stream s = i % 2 ? doomed : kept;
                const xfer_status st = xfer_memcpy_async(ctx, dst, src, sizeof src, XFER_COPY_DEFAULT, s);
                ++copies;
                if (!handle_race_outcome(st)) ++bad;
                // The mock copies at call time: a successful call has moved the bytes.
                if (st == XFER_SUCCESS && std::memcmp(dst, src, sizeof src) != 0) ++bad;
                if (st == XFER_ERROR_INVALID_HANDLE && s == kept) break; // the context is closed
            }
        });
        while (copies.load() < 50) std::this_thread::yield();
        EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(doomed));
        while (copies.load() < 100) std::this_thread::yield();
        EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
        user.join();
        EXPECT_EQ(bad.load(), 0) << "round " << round;
        EXPECT_XFER(XFER_ERROR_INVALID_HANDLE,
                    xfer_memcpy_async(ctx, &round, &round, 1, XFER_COPY_DEFAULT, kept)); // from this thread too
    }
}

TEST_F(Threads, CloseWhileOtherThreadsUseTheContextLeaksNothing) {
    long live = mockfull_live();
    for (int round = 0; round < 20; ++round) {
        xfer_context ctx = nullptr;
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx));
        std::atomic<int> bad{0};
        std::atomic<int> started{0};
        std::vector<std::thread> users;
        for (int t = 0; t < 4; ++t) {
            users.emplace_back([&] {
                xfer_stream s = nullptr;
                for (int i = 0; i < 200; ++i) {
                    xfer_buffer buf = nullptr;
                    xfer_status st = xfer_alloc(ctx, 256, 0, &buf);
                    ++started;
                    if (!handle_race_outcome(st)) ++bad;
                    if (st != XFER_SUCCESS) break;
                    if (!handle_race_outcome(xfer_copy(buf, XFER_TO_DEVICE, 0, 256))) ++bad;
                    if (s == nullptr && !handle_race_outcome(xfer_stream_create(ctx, &s))) ++bad;
                    if (s != nullptr && !handle_race_outcome(xfer_copy_async(buf, XFER_TO_HOST, 0, 256, s))) ++bad;
                    if (!handle_race_outcome(xfer_free(buf))) ++bad;
                }
            });
        }
        while (started.load() < 4) std::this_thread::yield();
        EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
        for (auto &th : users) th.join();
        EXPECT_EQ(bad.load(), 0);
        EXPECT_EQ(mockfull_live(), live) << "round " << round;
    }
}

TEST_F(Threads, LastErrorIsPerThread) {
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_free(nullptr));
    const std::string mine = xfer_last_error();
    std::string theirs;
    std::thread other([&] {
        theirs = xfer_last_error(); // nothing failed on this thread yet
        xfer_open("mock", -5, nullptr);
    });
    other.join();
    EXPECT_EQ(theirs, "");
    EXPECT_EQ(mine, xfer_last_error());
}

TEST_F(Threads, ConcurrentEnumerationAndOpen) {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"probefail", "junk", "abi", "good"}));
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 20; ++i) {
                int count = 0;
                if (xfer_backend_count(&count) != XFER_SUCCESS || count < 5) ++errors;
                for (int b = 0; b < count; ++b) {
                    xfer_backend_info info{};
                    if (xfer_backend_get_info(b, &info) != XFER_SUCCESS || info.name == nullptr ||
                        info.reason == nullptr)
                        ++errors;
                }
                if (xfer_param_count(&count) != XFER_SUCCESS) ++errors;
                xfer_context ctx = nullptr;
                if (xfer_open(t % 2 ? "mock" : "mockfull", 0, &ctx) != XFER_SUCCESS)
                    ++errors;
                else if (xfer_close(ctx) != XFER_SUCCESS)
                    ++errors;
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(errors.load(), 0);
}

} // namespace

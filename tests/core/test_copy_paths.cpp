// SPDX-License-Identifier: Apache-2.0
// Which path each copy took, as the core keeps it, against mock plugins: per-path statistics
// (exact, across threads, reset), bytes a plugin does not report (XFER_PATH_UNREPORTED), the
// copy observer, the slow-path policy (allow, warn through the copy log, refuse with
// XFER_ERROR_SLOW_PATH and nothing queued), the copy log of XFER_LOG=copies, registrations, and
// every bad argument of the new functions.
#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace xfer::test;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

xfer_context_stats stats_of(xfer_context ctx) {
    xfer_context_stats s{};
    s.struct_size = sizeof s;
    EXPECT_XFER(XFER_SUCCESS, xfer_context_get_stats(ctx, &s));
    return s;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

struct Records {
    std::vector<xfer_copy_record> seen;
    std::vector<std::string> functions;
    static void observe(const xfer_copy_record *r, void *self) {
        auto *me = static_cast<Records *>(self);
        me->seen.push_back(*r);
        me->functions.emplace_back(r->function);
    }
};

// A context of the path-reporting mock with a stream and two host arrays of `bytes`.
class CopyPaths : public CoreTest {
  protected:
    EnvGuard paths_{"XFER_PLUGIN_PATH", plugin_path({"paths", "good"})};
    EnvGuard slow_{"XFER_SLOW_PATH", std::nullopt};
    EnvGuard log_{"XFER_LOG", std::nullopt};
    EnvGuard log_file_{"XFER_LOG_FILE", std::nullopt};

    void open(std::size_t bytes = 8 * kMiB) {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockpaths", 0, &ctx_));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx_, &s_));
        src_.assign(bytes, 0x5a);
        dst_.assign(bytes, 0x00);
    }
    void TearDown() override {
        if (s_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s_));
        if (ctx_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx_));
    }
    xfer_status raw(std::size_t bytes) {
        return xfer_memcpy_async(ctx_, dst_.data(), src_.data(), bytes, XFER_COPY_HOST_TO_DEVICE, s_);
    }

    xfer_context ctx_ = nullptr;
    xfer_stream s_ = nullptr;
    std::vector<unsigned char> src_, dst_;
};

TEST(CopyPathNames, EveryPathAndReasonHasItsName) {
    EXPECT_STREQ(xfer_copy_path_name(XFER_PATH_PINNED_DMA), "pinned_dma");
    EXPECT_STREQ(xfer_copy_path_name(XFER_PATH_DRIVER_PAGEABLE), "driver_pageable");
    EXPECT_STREQ(xfer_copy_path_name(XFER_PATH_MAPPED), "mapped");
    EXPECT_STREQ(xfer_copy_path_name(XFER_PATH_COUNT), "unknown");
    EXPECT_STREQ(xfer_copy_path_name(static_cast<xfer_copy_path>(-1)), "unknown");
    EXPECT_STREQ(xfer_path_reason_name(XFER_REASON_CACHE_FULL), "cache_full");
    EXPECT_STREQ(xfer_path_reason_name(XFER_REASON_COUNT), "unknown");
    std::vector<std::string> names;
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        const std::string name = xfer_copy_path_name(static_cast<xfer_copy_path>(p));
        EXPECT_NE(name, "unknown") << p;
        for (const std::string &n : names) EXPECT_NE(n, name) << "two paths named " << name;
        names.push_back(name);
    }
    EXPECT_STREQ(xfer_status_string(XFER_ERROR_SLOW_PATH), "XFER_ERROR_SLOW_PATH");
}

TEST(CopyPathNames, WhatIsSlowIsTheDriversPageableCopyAndANewRegistrationAboveTheSize) {
    const std::uint64_t big = XFER_SLOW_PATH_MIN_BYTES;
    EXPECT_EQ(1, xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, big));
    EXPECT_EQ(1, xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_CACHE_FULL, big));
    EXPECT_EQ(1, xfer_path_is_slow(XFER_PATH_NEW_REGISTRATION, XFER_REASON_FIRST_USE, big));
    EXPECT_EQ(0, xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_NO_FASTER_PATH, big - 1));
    EXPECT_EQ(0, xfer_path_is_slow(XFER_PATH_DRIVER_PAGEABLE, XFER_REASON_BELOW_CROSSOVER, 64 * big));
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        const auto path = static_cast<xfer_copy_path>(p);
        if (path == XFER_PATH_DRIVER_PAGEABLE || path == XFER_PATH_NEW_REGISTRATION) continue;
        EXPECT_EQ(0, xfer_path_is_slow(path, XFER_REASON_NO_FASTER_PATH, 64 * big)) << xfer_copy_path_name(path);
    }
}

TEST_F(CopyPaths, EveryCopyIsCountedUnderItsPathsExactly) {
    open();
    xfer_buffer b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, 4096, XFER_ALLOC_DEFAULT, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_copy_async(b, XFER_TO_DEVICE, 0, 4096, s_)); // pinned_dma
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(b, XFER_TO_HOST, 96, 1000));            // pinned_dma
    ASSERT_XFER(XFER_SUCCESS, raw(kMiB));                                       // driver_pageable (crossover)
    ASSERT_XFER(XFER_SUCCESS, raw(8 * kMiB)); // 4 MiB staged + 4 MiB driver_pageable (slow)
    void *dsts[] = {dst_.data(), dst_.data() + 100};
    const void *srcs[] = {src_.data(), src_.data() + 100};
    const std::size_t sizes[] = {10, 20};
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_batch_async(ctx_, dsts, srcs, sizes, 2, XFER_COPY_HOST_TO_DEVICE, s_));
    EXPECT_EQ(dst_[0], 0x5a); // the mock copies at once

    const xfer_context_stats s = stats_of(ctx_);
    EXPECT_EQ(s.version, XFER_CONTEXT_STATS_VERSION);
    EXPECT_EQ(s.path_count, unsigned{XFER_PATH_COUNT});
    EXPECT_EQ(s.calls, 5u);
    EXPECT_EQ(s.paths[XFER_PATH_PINNED_DMA].copies, 2u);
    EXPECT_EQ(s.paths[XFER_PATH_PINNED_DMA].bytes, 4096u + 1000u);
    // The batch has no entry of its own in the mock: the core falls back to memcpy_async per entry.
    EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].copies, 4u);
    EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].bytes, kMiB + 4 * kMiB + 30);
    EXPECT_EQ(s.paths[XFER_PATH_STAGED].copies, 1u);
    EXPECT_EQ(s.paths[XFER_PATH_STAGED].bytes, 4 * kMiB);
    EXPECT_EQ(s.paths[XFER_PATH_UNREPORTED].copies, 0u);
    EXPECT_EQ(s.slow_copies, 1u);
    EXPECT_EQ(s.refused_calls, 0u);
    std::uint64_t copies = 0;
    for (int p = 0; p < XFER_PATH_COUNT; ++p) copies += s.paths[p].copies;
    EXPECT_EQ(copies, 7u);
    EXPECT_GT(s.paths[XFER_PATH_PINNED_DMA].host_ns, 0u);
    EXPECT_GT(s.paths[XFER_PATH_STAGED].host_ns, 0u);

    ASSERT_XFER(XFER_SUCCESS, xfer_context_reset_stats(ctx_));
    const xfer_context_stats z = stats_of(ctx_);
    EXPECT_EQ(z.calls, 0u);
    EXPECT_EQ(z.slow_copies, 0u);
    for (int p = 0; p < XFER_PATH_COUNT; ++p) {
        EXPECT_EQ(z.paths[p].copies, 0u);
        EXPECT_EQ(z.paths[p].bytes, 0u);
        EXPECT_EQ(z.paths[p].host_ns, 0u);
    }
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b));
}

TEST_F(CopyPaths, CountsAreExactWithManyThreadsCopyingAtOnce) {
    open(64 * 1024);
    constexpr int kThreads = 8, kCopies = 2000;
    std::vector<std::thread> threads;
    std::vector<std::vector<unsigned char>> dsts(kThreads, std::vector<unsigned char>(256));
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            xfer_stream s = nullptr;
            ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx_, &s));
            for (int i = 0; i < kCopies; ++i) {
                ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_async(ctx_, dsts[t].data(), src_.data(), 1 + (i % 200),
                                                            XFER_COPY_HOST_TO_DEVICE, s));
            }
            EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
        });
    }
    for (std::thread &t : threads) t.join();
    std::uint64_t bytes = 0;
    for (int i = 0; i < kCopies; ++i) bytes += 1 + (i % 200);
    const xfer_context_stats s = stats_of(ctx_);
    EXPECT_EQ(s.calls, std::uint64_t{kThreads} * kCopies);
    EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].copies, std::uint64_t{kThreads} * kCopies);
    EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].bytes, kThreads * bytes);
}

TEST_F(CopyPaths, CountsStayExactAcrossManyContextsPerThreadReadsWhileCountingAndResets) {
    // Each thread keeps its own counters per context: threads that copy on more contexts than it
    // keeps at hand, threads that ended, and a reader and a reset while they count.
    constexpr int kContexts = 7, kThreads = 4, kRounds = 300;
    std::vector<xfer_context> ctxs(kContexts, nullptr);
    std::vector<xfer_stream> streams(kContexts, nullptr);
    for (int c = 0; c < kContexts; ++c) {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("mockpaths", 0, &ctxs[c]));
        ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctxs[c], &streams[c]));
    }
    std::vector<unsigned char> src(512, 0x11);
    const auto copy_round = [&](std::vector<unsigned char> &dst, int round) {
        for (int c = 0; c < kContexts; ++c) {
            ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_async(ctxs[c], dst.data(), src.data(), 1 + (round + c) % 100,
                                                        XFER_COPY_HOST_TO_DEVICE, streams[c]));
        }
    };
    // Counted before the reset: gone from what stats_of reports after it.
    std::vector<unsigned char> first(512);
    for (int r = 0; r < 10; ++r) copy_round(first, r);
    for (xfer_context c : ctxs) ASSERT_XFER(XFER_SUCCESS, xfer_context_reset_stats(c));
    std::atomic<bool> counting{true};
    std::thread reader([&] {
        std::uint64_t last = 0;
        while (counting.load()) {
            const std::uint64_t now = stats_of(ctxs[0]).calls;
            EXPECT_GE(now, last); // never backwards
            last = now;
        }
    });
    std::vector<std::thread> threads;
    std::vector<std::vector<unsigned char>> dsts(kThreads, std::vector<unsigned char>(512));
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < kRounds; ++r) copy_round(dsts[t], r);
        });
    }
    for (std::thread &t : threads) t.join();
    counting = false;
    reader.join();
    for (int c = 0; c < kContexts; ++c) {
        std::uint64_t bytes = 0;
        for (int r = 0; r < kRounds; ++r) bytes += 1 + (r + c) % 100;
        const xfer_context_stats s = stats_of(ctxs[c]);
        EXPECT_EQ(s.calls, std::uint64_t{kThreads} * kRounds) << "context " << c;
        EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].copies, std::uint64_t{kThreads} * kRounds) << "context " << c;
        EXPECT_EQ(s.paths[XFER_PATH_DRIVER_PAGEABLE].bytes, kThreads * bytes) << "context " << c;
    }
    for (xfer_context c : ctxs) EXPECT_XFER(XFER_SUCCESS, xfer_close(c));
}

TEST_F(CopyPaths, BytesAPluginDoesNotReportAreCountedAsUnreported) {
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mockfull", 0, &ctx)); // reports no path
    xfer_stream s = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_stream_create(ctx, &s));
    unsigned char a[64] = {1}, b[64] = {0};
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_async(ctx, b, a, sizeof a, XFER_COPY_HOST_TO_DEVICE, s));
    void *dsts[] = {b, b + 32};
    const void *srcs[] = {a, a + 32};
    const std::size_t sizes[] = {16, 8};
    ASSERT_XFER(XFER_SUCCESS, xfer_memcpy_batch_async(ctx, dsts, srcs, sizes, 2, XFER_COPY_HOST_TO_DEVICE, s));
    const xfer_context_stats st = stats_of(ctx);
    EXPECT_EQ(st.calls, 2u);
    EXPECT_EQ(st.paths[XFER_PATH_UNREPORTED].copies, 3u);
    EXPECT_EQ(st.paths[XFER_PATH_UNREPORTED].bytes, 64u + 24u);
    EXPECT_XFER(XFER_SUCCESS, xfer_stream_destroy(s));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(CopyPaths, TheObserverGetsOneRecordPerPathOfEachCallAndCanBeRemoved) {
    open();
    Records records;
    ASSERT_XFER(XFER_SUCCESS, xfer_set_copy_observer(ctx_, &Records::observe, &records));
    ASSERT_XFER(XFER_SUCCESS, raw(8 * kMiB));
    ASSERT_EQ(records.seen.size(), 2u);
    const xfer_copy_record &staged = records.seen[0];
    const xfer_copy_record &driver = records.seen[1];
    EXPECT_EQ(staged.struct_size, sizeof(xfer_copy_record));
    EXPECT_EQ(staged.ctx, ctx_);
    EXPECT_EQ(staged.stream, s_);
    EXPECT_EQ(records.functions[0], "xfer_memcpy_async");
    EXPECT_EQ(staged.kind, XFER_COPY_HOST_TO_DEVICE);
    EXPECT_EQ(staged.path, XFER_PATH_STAGED);
    EXPECT_EQ(staged.reason, XFER_REASON_MEMORY);
    EXPECT_EQ(staged.slow, 0);
    EXPECT_EQ(staged.bytes, 4 * kMiB);
    EXPECT_EQ(staged.call_bytes, 8 * kMiB);
    EXPECT_EQ(driver.path, XFER_PATH_DRIVER_PAGEABLE);
    EXPECT_EQ(driver.reason, XFER_REASON_NO_FASTER_PATH);
    EXPECT_EQ(driver.slow, 1);
    EXPECT_EQ(driver.copies, 1u);
    EXPECT_EQ(driver.bytes, 4 * kMiB);

    xfer_buffer b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, 256, XFER_ALLOC_DEFAULT, &b));
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(b, XFER_TO_HOST, 0, 256));
    ASSERT_EQ(records.seen.size(), 3u);
    EXPECT_EQ(records.functions[2], "xfer_copy");
    EXPECT_EQ(records.seen[2].stream, nullptr); // xfer_copy's own stream is no handle of the caller's
    EXPECT_EQ(records.seen[2].kind, XFER_COPY_DEVICE_TO_HOST);
    EXPECT_EQ(records.seen[2].path, XFER_PATH_PINNED_DMA);

    ASSERT_XFER(XFER_SUCCESS, xfer_set_copy_observer(ctx_, nullptr, nullptr));
    ASSERT_XFER(XFER_SUCCESS, raw(100));
    EXPECT_EQ(records.seen.size(), 3u);
    EXPECT_EQ(stats_of(ctx_).calls, 3u); // statistics go on without an observer
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b));
}

// An observer that copies and reads the statistics from inside: its copy is a call of its own.
struct Reentrant {
    xfer_context ctx;
    xfer_stream s;
    unsigned char a[16] = {7}, b[16] = {0};
    int depth = 0;
    std::uint64_t calls_seen = 0;
    static void observe(const xfer_copy_record *, void *self) {
        auto *me = static_cast<Reentrant *>(self);
        if (me->depth++ == 0) {
            EXPECT_XFER(XFER_SUCCESS, xfer_memcpy_async(me->ctx, me->b, me->a, 16, XFER_COPY_HOST_TO_DEVICE, me->s));
            xfer_context_stats st{};
            st.struct_size = sizeof st;
            EXPECT_XFER(XFER_SUCCESS, xfer_context_get_stats(me->ctx, &st));
            me->calls_seen = st.calls;
        }
        --me->depth;
    }
};

TEST_F(CopyPaths, AnObserverMayCopyAndReadTheStatistics) {
    open();
    Reentrant r{ctx_, s_};
    ASSERT_XFER(XFER_SUCCESS, xfer_set_copy_observer(ctx_, &Reentrant::observe, &r));
    ASSERT_XFER(XFER_SUCCESS, raw(64));
    EXPECT_EQ(r.b[0], 7);
    EXPECT_EQ(r.calls_seen, 2u); // the outer call was counted before its observer ran
    EXPECT_EQ(stats_of(ctx_).paths[XFER_PATH_DRIVER_PAGEABLE].copies, 2u);
}

TEST_F(CopyPaths, RefuseQueuesNothingAndNamesThePathAndWhy) {
    open();
    ASSERT_XFER(XFER_SUCCESS, xfer_context_set_slow_path(ctx_, XFER_SLOW_PATH_REFUSE));
    xfer_slow_path policy = XFER_SLOW_PATH_ALLOW;
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_slow_path(ctx_, &policy));
    EXPECT_EQ(policy, XFER_SLOW_PATH_REFUSE);
    Records records;
    ASSERT_XFER(XFER_SUCCESS, xfer_set_copy_observer(ctx_, &Records::observe, &records));
    EXPECT_XFER(XFER_ERROR_SLOW_PATH, raw(8 * kMiB));
    const std::string m = xfer_last_error();
    EXPECT_NE(m.find("xfer_memcpy_async"), std::string::npos) << m;
    EXPECT_NE(m.find("driver_pageable"), std::string::npos) << m;
    EXPECT_NE(m.find("no faster path"), std::string::npos) << m;
    EXPECT_NE(m.find("nothing was queued"), std::string::npos) << m;
    EXPECT_EQ(dst_[0], 0x00); // not a byte moved
    EXPECT_EQ(dst_[8 * kMiB - 1], 0x00);
    EXPECT_TRUE(records.seen.empty());
    // Below the crossover and on fast paths everything still goes.
    EXPECT_XFER(XFER_SUCCESS, raw(2 * kMiB));
    EXPECT_EQ(dst_[0], 0x5a);
    const xfer_context_stats s = stats_of(ctx_);
    EXPECT_EQ(s.refused_calls, 1u);
    EXPECT_EQ(s.calls, 1u);
    EXPECT_EQ(s.paths[XFER_PATH_STAGED].copies, 0u); // the refused call's first piece is not counted
    EXPECT_EQ(s.slow_copies, 0u);
}

TEST_F(CopyPaths, WarnCopiesAndWritesTheSlowPiecesToTheCopyLog) {
    TempFile log("");
    EnvGuard file{"XFER_LOG_FILE", log.path()};
    EnvGuard warn{"XFER_SLOW_PATH", "warn"};
    open();
    xfer_slow_path policy = XFER_SLOW_PATH_ALLOW;
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_slow_path(ctx_, &policy));
    EXPECT_EQ(policy, XFER_SLOW_PATH_WARN);
    ASSERT_XFER(XFER_SUCCESS, raw(8 * kMiB));
    ASSERT_XFER(XFER_SUCCESS, raw(2 * kMiB)); // below the crossover: not slow, not logged
    EXPECT_EQ(dst_[8 * kMiB - 1], 0x5a);
    const std::string text = read_file(log.path());
    EXPECT_NE(text.find("xfer: copy mockpaths:0 xfer_memcpy_async h2d path=driver_pageable reason=no_faster_path "
                        "copies=1 bytes=4194304"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" slow\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("path=staged"), std::string::npos) << text;
    EXPECT_EQ(text.find("bytes=2097152"), std::string::npos) << text;
    EXPECT_EQ(stats_of(ctx_).slow_copies, 1u);
}

TEST_F(CopyPaths, LogCopiesWritesOneLinePerPathOfEachCall) {
    TempFile log("");
    EnvGuard file{"XFER_LOG_FILE", log.path()};
    EnvGuard copies{"XFER_LOG", "copies"};
    open();
    ASSERT_XFER(XFER_SUCCESS, raw(8 * kMiB));
    ASSERT_XFER(XFER_SUCCESS, raw(100));
    const std::string text = read_file(log.path());
    EXPECT_NE(text.find("path=staged reason=memory copies=1 bytes=4194304"), std::string::npos) << text;
    EXPECT_NE(text.find("path=driver_pageable reason=no_faster_path copies=1 bytes=4194304"), std::string::npos)
        << text;
    EXPECT_NE(text.find("path=driver_pageable reason=below_crossover copies=1 bytes=100 "), std::string::npos) << text;
    int lines = 0;
    for (char c : text) lines += c == '\n';
    EXPECT_EQ(lines, 3);
    // An observer of the application's replaces the log.
    Records records;
    ASSERT_XFER(XFER_SUCCESS, xfer_set_copy_observer(ctx_, &Records::observe, &records));
    ASSERT_XFER(XFER_SUCCESS, raw(100));
    EXPECT_EQ(read_file(log.path()), text);
    EXPECT_EQ(records.seen.size(), 1u);
}

TEST_F(CopyPaths, BadPolicyAndLogSettingsAreConfigErrors) {
    {
        EnvGuard bad{"XFER_SLOW_PATH", "never"};
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mockpaths", 0, &ctx));
        EXPECT_NE(std::string(xfer_last_error()).find("allow|warn|refuse"), std::string::npos) << xfer_last_error();
        EXPECT_EQ(ctx, nullptr);
    }
    {
        EnvGuard bad{"XFER_LOG", "everything"};
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mockpaths", 0, &ctx));
        EXPECT_NE(std::string(xfer_last_error()).find("XFER_LOG"), std::string::npos) << xfer_last_error();
    }
    {
        EnvGuard copies{"XFER_LOG", "copies"};
        EnvGuard file{"XFER_LOG_FILE", "/nonexistent-folder/xfer.log"};
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_CONFIG, xfer_open("mockpaths", 0, &ctx));
        EXPECT_NE(std::string(xfer_last_error()).find("/nonexistent-folder/xfer.log"), std::string::npos)
            << xfer_last_error();
        EXPECT_EQ(ctx, nullptr);
    }
    TempFile conf("slow_path = refuse\nlog = none\n");
    EnvGuard config{"XFER_CONFIG", conf.path()};
    open();
    xfer_slow_path policy = XFER_SLOW_PATH_ALLOW;
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_slow_path(ctx_, &policy));
    EXPECT_EQ(policy, XFER_SLOW_PATH_REFUSE);
}

TEST_F(CopyPaths, ARefusedRegistrationOnFirstUseRegistersNothing) {
    const std::size_t bytes = 3 * kMiB + 1; // the mock registers copies of this size on first use
    open();
    ASSERT_XFER(XFER_SUCCESS, xfer_context_set_slow_path(ctx_, XFER_SLOW_PATH_REFUSE));
    EXPECT_XFER(XFER_ERROR_SLOW_PATH, raw(bytes));
    const std::string m = xfer_last_error();
    EXPECT_NE(m.find("new_registration"), std::string::npos) << m;
    EXPECT_EQ(dst_[0], 0x00);
    xfer_context_stats s = stats_of(ctx_);
    EXPECT_EQ(s.refused_calls, 1u);
    EXPECT_EQ(s.registrations, 0u); // asked first: nothing was locked for the refused copy
    EXPECT_EQ(s.paths[XFER_PATH_NEW_REGISTRATION].copies, 0u);
    // Under warn (and allow) the same copy registers and is counted, once.
    ASSERT_XFER(XFER_SUCCESS, xfer_context_set_slow_path(ctx_, XFER_SLOW_PATH_WARN));
    EXPECT_XFER(XFER_SUCCESS, raw(bytes));
    EXPECT_EQ(dst_[bytes - 1], 0x5a);
    s = stats_of(ctx_);
    EXPECT_EQ(s.registrations, 1u);
    EXPECT_EQ(s.registered_bytes, bytes);
    EXPECT_EQ(s.paths[XFER_PATH_NEW_REGISTRATION].copies, 1u);
    EXPECT_EQ(s.paths[XFER_PATH_NEW_REGISTRATION].bytes, bytes);
    EXPECT_EQ(s.slow_copies, 1u);
    EXPECT_EQ(s.refused_calls, 1u);
}

TEST_F(CopyPaths, RegistrationsAreCounted) {
    open();
    std::vector<unsigned char> range(3 * 4096);
    ASSERT_XFER(XFER_SUCCESS, xfer_register(ctx_, range.data(), range.size(), XFER_REGISTER_DEFAULT));
    ASSERT_XFER(XFER_SUCCESS, xfer_unregister(ctx_, range.data()));
    const xfer_context_stats s = stats_of(ctx_);
    EXPECT_EQ(s.registrations, 1u);
    EXPECT_EQ(s.registered_bytes, range.size());
    EXPECT_EQ(s.registration_ns, 1000u);
    EXPECT_EQ(s.unregistrations, 1u);
    EXPECT_EQ(s.unregistered_bytes, 4096u);
    EXPECT_EQ(s.unregistration_ns, 500u);
}

TEST_F(CopyPaths, BadArgumentsGetSpecificStatusesAndChangeNothing) {
    open();
    ASSERT_XFER(XFER_SUCCESS, raw(64));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_context_get_stats(ctx_, nullptr));
    xfer_context_stats tiny{};
    tiny.struct_size = 4;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_context_get_stats(ctx_, &tiny));
    EXPECT_NE(std::string(xfer_last_error()).find("struct_size"), std::string::npos) << xfer_last_error();
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_get_stats(nullptr, &tiny));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_reset_stats(nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_set_copy_observer(nullptr, nullptr, nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_set_slow_path(nullptr, XFER_SLOW_PATH_WARN));
    xfer_slow_path policy = XFER_SLOW_PATH_REFUSE;
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_context_get_slow_path(nullptr, &policy));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_context_get_slow_path(ctx_, nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_context_set_slow_path(ctx_, static_cast<xfer_slow_path>(3)));
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_slow_path(ctx_, &policy));
    EXPECT_EQ(policy, XFER_SLOW_PATH_ALLOW);
    EXPECT_EQ(stats_of(ctx_).calls, 1u);
}

// A caller built against an older, smaller xfer_context_stats: only its fields are written.
TEST_F(CopyPaths, ASmallerStatsStructIsFilledOnlyAsFarAsItReaches) {
    open();
    ASSERT_XFER(XFER_SUCCESS, raw(64));
    const std::size_t old_size = offsetof(xfer_context_stats, paths) + 3 * sizeof(xfer_path_stats);
    std::vector<unsigned char> memory(sizeof(xfer_context_stats), 0xee);
    auto *s = reinterpret_cast<xfer_context_stats *>(memory.data());
    s->struct_size = old_size;
    ASSERT_XFER(XFER_SUCCESS, xfer_context_get_stats(ctx_, s));
    EXPECT_EQ(s->struct_size, old_size);
    EXPECT_EQ(s->path_count, 3u);
    EXPECT_EQ(s->calls, 1u);
    for (std::size_t i = old_size; i < memory.size(); ++i) ASSERT_EQ(memory[i], 0xee) << "byte " << i;
}

} // namespace

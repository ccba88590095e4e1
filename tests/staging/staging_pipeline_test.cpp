// SPDX-License-Identifier: Apache-2.0
// The staging pipeline's protocol on fake streams (fake_device_queue.hpp): every size both
// ways in both modes, stream order of a to-host copy then a to-device copy of one host range,
// a held stream that neither starts early nor holds other streams up, many threads at once, a
// failed stream and a refused DMA (reported, nothing hangs), a full arena (the copy goes the
// direct way), and close() with copies in flight. Every byte is compared.
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "fake_device_queue.hpp"
#include "staging_plan.hpp" // kArenaGranuleBytes, granules_of
#include <xfer_test/bytes.hpp>

namespace {

using namespace xfer::cuda::pageable;
using xfer::test::Bytes;
using xfer::test::FakeDeviceQueue;
using xfer::test::FakeStream;
using xfer::test::FakeWords;
using xfer::test::random_bytes;
using xfer::test::same_bytes;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;

struct Shape {
    const char *label;
    std::size_t threads;
    std::size_t chunk;
    std::size_t slots; // the arena, in chunks
    std::chrono::microseconds linger{0};
    std::size_t linger_workers = 2;
    bool demote = false;
};

// One worker and a one-slot arena (every chunk waits for the one before); three workers and
// four slots, lingering between copies (they find the next copy without being woken); eight
// workers, small chunks and many slots (many pieces, copies side by side), demoting the pieces
// of chunks filled for the device (the default of the pageable backend).
const Shape kShapes[] = {
    {"threads1_slots1", 1, 1 * MiB, 1},
    {"threads3_slots4_linger", 3, 2 * MiB, 4, std::chrono::milliseconds(2), 3},
    {"threads8_slots16_demote", 8, 512 * KiB, 16, std::chrono::microseconds(0), 2, true},
};

// A pipeline on fake streams, with the count of to-host copies whose last byte has landed.
struct Rig {
    explicit Rig(const Shape &shape, std::chrono::milliseconds stall = std::chrono::milliseconds(50))
        : arena(granules_of(shape.slots * shape.chunk) * kArenaGranuleBytes),
          words(StagingPipeline::flag_words_needed(arena.size())) {
        PipelineConfig c;
        c.threads = shape.threads;
        c.chunk_bytes = shape.chunk;
        c.arena_bytes = arena.size();
        c.stall = stall;
        c.linger = shape.linger;
        c.linger_workers = shape.linger_workers;
        c.demote = shape.demote;
        c.host_writes_done = [this](void *) { host_writes_done.fetch_add(1); };
        pipeline = std::make_unique<StagingPipeline>(queue, c, arena.data(), words.words());
        EXPECT_TRUE(pipeline->start());
    }
    // Queues a copy, staged or (no room in the arena before `stall`) the direct way on the
    // stream, as the engine's caller does; true if staged.
    bool copy(void *device, void *host, std::size_t bytes, Way way, FakeStream &s, bool wait_host = false) {
        bool taken = false;
        std::string why;
        EXPECT_EQ(XFER_SUCCESS, pipeline->submit(device, host, bytes, way, s.handle(), wait_host, &taken, &why)) << why;
        if (!taken) {
            way == Way::to_device ? s.copy(device, host, bytes) : s.copy(host, device, bytes);
            if (wait_host) {
                EXPECT_TRUE(s.synchronize());
            }
        }
        return taken;
    }
    // Queues a copy that must be staged.
    void stage(void *device, void *host, std::size_t bytes, Way way, FakeStream &s, bool wait_host = false) {
        bool taken = false;
        std::string why;
        ASSERT_EQ(XFER_SUCCESS, pipeline->submit(device, host, bytes, way, s.handle(), wait_host, &taken, &why)) << why;
        ASSERT_TRUE(taken) << "the copy of " << bytes << " bytes was not staged";
    }

    FakeDeviceQueue queue;
    std::vector<unsigned char> arena;
    FakeWords words;
    std::atomic<int> host_writes_done{0};
    std::unique_ptr<StagingPipeline> pipeline;
};

class StagingPipelineTest : public ::testing::TestWithParam<Shape> {};

TEST_P(StagingPipelineTest, EverySizeBothWaysInBothModes) {
    Rig rig(GetParam());
    FakeStream s;
    const std::size_t sizes[] = {1, 4095, 64 * KiB + 3, 1 * MiB, 5 * MiB + 17, 33 * MiB};
    int to_host = 0;
    for (bool wait_host : {false, true}) {
        for (std::size_t bytes : sizes) {
            const Bytes host = random_bytes(bytes, bytes + wait_host);
            Bytes device(bytes, 0);
            Bytes back(bytes, 0);
            // With a one-slot arena the second copy may find no room before the first is done.
            rig.copy(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s, wait_host);
            to_host += rig.copy(device.data(), back.data(), bytes, Way::to_host, s, wait_host) ? 1 : 0;
            ASSERT_TRUE(s.synchronize());
            EXPECT_TRUE(same_bytes(host, device)) << bytes << " bytes to the device";
            EXPECT_TRUE(same_bytes(host, back)) << bytes << " bytes back to the host";
        }
    }
    rig.pipeline->close();
    EXPECT_EQ(to_host, rig.host_writes_done.load()) << "each staged to-host copy ends its host writes once";
    EXPECT_GT(rig.pipeline->counters().staged, 0u);
    EXPECT_EQ(0u, rig.pipeline->counters().given_up);
}

TEST_P(StagingPipelineTest, ToHostThenToDeviceOfOneHostRangeOnOneStream) {
    Rig rig(GetParam());
    FakeStream s;
    const std::size_t bytes = 9 * MiB + 5;
    const Bytes a = random_bytes(bytes, 11);
    Bytes host = random_bytes(bytes, 12);
    Bytes b(bytes, 0);
    // a -> host -> b on one stream: the second copy must read the host range only after the
    // first has written it, although both calls return at once.
    rig.stage(const_cast<unsigned char *>(a.data()), host.data(), bytes, Way::to_host, s);
    rig.copy(b.data(), host.data(), bytes, Way::to_device, s);
    ASSERT_TRUE(s.synchronize());
    EXPECT_TRUE(same_bytes(a, host));
    EXPECT_TRUE(same_bytes(a, b));
}

TEST_P(StagingPipelineTest, AHeldStreamStartsNothingEarlyAndHoldsNoOtherStream) {
    Rig rig(GetParam());
    FakeStream held;
    FakeStream other;
    const std::size_t bytes = 3 * MiB + 1;
    Bytes host = random_bytes(bytes, 21);
    Bytes device(bytes, 0);
    held.hold();
    rig.stage(device.data(), host.data(), bytes, Way::to_device, held);
    // Work on another stream completes while the first is held (it may find the arena full
    // with the held copy's slots; then it goes the direct way, which the caller would take).
    const Bytes mine = random_bytes(bytes, 22);
    Bytes theirs(bytes, 0);
    bool taken = false;
    std::string why;
    ASSERT_EQ(XFER_SUCCESS, rig.pipeline->submit(theirs.data(), const_cast<unsigned char *>(mine.data()), bytes,
                                                 Way::to_device, other.handle(), false, &taken, &why));
    if (!taken) {
        other.copy(theirs.data(), mine.data(), bytes);
    }
    ASSERT_TRUE(other.synchronize());
    EXPECT_TRUE(same_bytes(mine, theirs));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(same_bytes(Bytes(bytes, 0), device)) << "the held stream's copy ran before the stream reached it";
    // The copy reads the host range when the stream reaches it, not at call time.
    const Bytes later = random_bytes(bytes, 23);
    std::memcpy(host.data(), later.data(), bytes);
    held.release();
    ASSERT_TRUE(held.synchronize());
    EXPECT_TRUE(same_bytes(later, device));
}

TEST_P(StagingPipelineTest, ManyThreadsOnTheirOwnStreamsAndOnOneShared) {
    Rig rig(GetParam());
    FakeStream shared;
    constexpr int kThreads = 6;
    constexpr int kRounds = 6;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            FakeStream own;
            for (int r = 0; r < kRounds; ++r) {
                FakeStream &s = r % 2 == 0 ? own : shared;
                const std::size_t bytes = (std::size_t(t) * 977 + std::size_t(r) * 131071) % (6 * MiB) + 1;
                const Bytes host = random_bytes(bytes, std::uint64_t(t) * 100 + std::uint64_t(r));
                Bytes device(bytes, 0);
                Bytes back(bytes, 0);
                for (auto [dst, src, way] :
                     {std::tuple{device.data(), const_cast<unsigned char *>(host.data()), Way::to_device},
                      std::tuple{device.data(), back.data(), Way::to_host}}) {
                    bool taken = false;
                    std::string why;
                    if (rig.pipeline->submit(dst, src, bytes, way, s.handle(), false, &taken, &why) != XFER_SUCCESS) {
                        failures.fetch_add(1);
                    } else if (!taken) {
                        // The direct way, in stream order, as the engine's caller does it.
                        way == Way::to_device ? s.copy(dst, src, bytes) : s.copy(src, dst, bytes);
                    }
                }
                if (!s.synchronize() || std::memcmp(host.data(), device.data(), bytes) != 0 ||
                    std::memcmp(host.data(), back.data(), bytes) != 0) {
                    failures.fetch_add(1);
                }
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    EXPECT_EQ(0, failures.load());
    EXPECT_EQ(0u, rig.pipeline->counters().given_up);
    EXPECT_GT(rig.pipeline->counters().staged, 0u);
}

TEST_P(StagingPipelineTest, CloseWaitsForCopiesInFlight) {
    Rig rig(GetParam());
    FakeStream s;
    const std::size_t bytes = 7 * MiB + 3;
    const Bytes device = random_bytes(bytes, 31);
    Bytes back(bytes, 0);
    rig.stage(const_cast<unsigned char *>(device.data()), back.data(), bytes, Way::to_host, s);
    rig.pipeline->close(); // without synchronising the stream first
    EXPECT_TRUE(same_bytes(device, back)) << "close() returned before the copy had written the host memory";
    ASSERT_TRUE(s.synchronize());
}

INSTANTIATE_TEST_SUITE_P(Shapes, StagingPipelineTest, ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<Shape> &info) { return std::string(info.param.label); });

const Shape kDefaultShape = {"threads4_slots8", 4, 1 * MiB, 8};

TEST(StagingPipelineOrder, ACopyOnAnIdleStreamIsFilledBeforeTheStreamReachesIt) {
    // The stream had nothing left to run when the copy was submitted: earlier work is done, so
    // the workers fill the first slot without waiting for the stream to write the ready word.
    Rig rig(kDefaultShape);
    FakeStream s;
    s.freeze(); // idle, and runs nothing of what is queued from now on
    const std::size_t bytes = 3 * MiB + 5;
    const Bytes host = random_bytes(bytes, 41);
    Bytes device(bytes, 0);
    rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
    EXPECT_EQ(1u, rig.queue.idle_answers()) << "the submission asks whether the stream is idle, once";
    // The first chunk's slot starts at granule 0 of the empty arena; its host word says "filled".
    const std::uint32_t *filled = rig.words.words()[0].host;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (__atomic_load_n(filled, __ATOMIC_ACQUIRE) == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ASSERT_NE(0u, __atomic_load_n(filled, __ATOMIC_ACQUIRE)) << "the first slot was not filled while the stream slept";
    const Span head = plan_layout(bytes, kDefaultShape.chunk).span(0);
    EXPECT_EQ(0, std::memcmp(rig.arena.data(), host.data(), head.bytes)) << "the slot holds the copy's first bytes";
    EXPECT_TRUE(same_bytes(Bytes(bytes, 0), device)) << "no DMA ran on the frozen stream";
    s.thaw();
    ASSERT_TRUE(s.synchronize());
    EXPECT_TRUE(same_bytes(host, device));
}

TEST(StagingPipelineOrder, ABusyStreamIsNotIdle) {
    // Work queued ahead (here a hold, as a kernel or a host function would be): the copy waits
    // for the stream to reach it, however long (AHeldStreamStartsNothingEarly... checks the bytes).
    Rig rig(kDefaultShape);
    FakeStream s;
    s.hold();
    const std::size_t bytes = 2 * MiB;
    const Bytes host = random_bytes(bytes, 42);
    Bytes device(bytes, 0);
    rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
    EXPECT_EQ(1u, rig.queue.idle_calls());
    EXPECT_EQ(0u, rig.queue.idle_answers());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(0u, __atomic_load_n(rig.words.words()[0].host, __ATOMIC_ACQUIRE)) << "filled before the stream got there";
    s.release();
    ASSERT_TRUE(s.synchronize());
    EXPECT_TRUE(same_bytes(host, device));
}

TEST(StagingPipelineLinger, CloseDoesNotWaitOutTheLinger) {
    Shape shape = kDefaultShape;
    shape.linger = std::chrono::seconds(30);
    Rig rig(shape);
    FakeStream s;
    const std::size_t bytes = 3 * MiB;
    const Bytes host = random_bytes(bytes, 43);
    Bytes device(bytes, 0);
    Bytes back(bytes, 0);
    rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
    ASSERT_TRUE(s.synchronize());
    // Lingering workers pick up a copy that comes while they watch (and wake the others).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto before = rig.pipeline->counters();
    rig.stage(device.data(), back.data(), bytes, Way::to_host, s);
    ASSERT_TRUE(s.synchronize());
    EXPECT_TRUE(same_bytes(host, back));
    EXPECT_GE(rig.pipeline->counters().linger_pickups, before.linger_pickups + 1)
        << "no lingering worker saw the second copy";
    const auto t0 = std::chrono::steady_clock::now();
    rig.pipeline->close();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15))
        << "close() waited for the workers' 30 s linger to run out";
}

TEST(StagingPipelineLinger, EveryWorkerSleepsAgainOnceTheLingerEnds) {
    Shape shape = kDefaultShape; // four workers, two of them lingering at most
    shape.linger = std::chrono::milliseconds(20);
    Rig rig(shape);
    FakeStream s;
    const std::size_t bytes = 3 * MiB;
    const Bytes host = random_bytes(bytes, 44);
    Bytes device(bytes, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // all asleep after starting
    const std::uint64_t asleep_before = rig.pipeline->counters().sleeps;
    rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
    ASSERT_TRUE(s.synchronize());
    EXPECT_TRUE(same_bytes(host, device));
    // Each of the four was woken for the copy (by the submitter or a lingering worker) and goes
    // back to sleep, the lingering ones 20 ms after their last work: no worker spins on.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (rig.pipeline->counters().sleeps < asleep_before + shape.threads &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(rig.pipeline->counters().sleeps, asleep_before + shape.threads);
}

TEST(StagingPipelineLinger, AtMostLingerWorkersSpinTheOthersSleep) {
    for (std::size_t lingering : {std::size_t{2}, std::size_t{4}}) {
        Shape shape = kDefaultShape; // four workers
        shape.linger = std::chrono::seconds(30);
        shape.linger_workers = lingering;
        Rig rig(shape);
        FakeStream s;
        const std::size_t bytes = 3 * MiB;
        const Bytes host = random_bytes(bytes, 46);
        Bytes device(bytes, 0);
        for (int i = 0; i < 2; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
            ASSERT_TRUE(s.synchronize());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_TRUE(same_bytes(host, device));
        const auto c = rig.pipeline->counters();
        if (lingering == shape.threads) {
            EXPECT_EQ(0u, c.sleeps) << "every worker lingers: none sleeps within the 30 s";
        } else {
            // Two sleep at the start and after each copy: at least 3 x 2.
            EXPECT_GE(c.sleeps, 3 * (shape.threads - lingering));
        }
        EXPECT_GE(c.linger_pickups, 1u) << lingering << " lingering";
    }
}

TEST(StagingPipelineLinger, NoWorkerLingersWithLingerZero) {
    Rig rig(kDefaultShape); // linger 0
    FakeStream s;
    const std::size_t bytes = 3 * MiB;
    const Bytes host = random_bytes(bytes, 45);
    Bytes device(bytes, 0);
    for (int i = 0; i < 2; ++i) {
        rig.stage(device.data(), const_cast<unsigned char *>(host.data()), bytes, Way::to_device, s);
        ASSERT_TRUE(s.synchronize());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(same_bytes(host, device));
    EXPECT_EQ(0u, rig.pipeline->counters().linger_pickups);
    EXPECT_GT(rig.pipeline->counters().sleeps, 0u);
}

TEST(StagingPipelineFailure, AFailedStreamGivesUpItsCopyAndNothingHangs) {
    for (Way way : {Way::to_device, Way::to_host}) {
        for (bool wait_host : {false, true}) {
            Rig rig(kDefaultShape, std::chrono::milliseconds(20));
            FakeStream s;
            const std::size_t bytes = 32 * MiB;
            Bytes host(bytes, 1);
            Bytes device(bytes, 2);
            s.hold(); // the stream fails before it reaches the copy: no worker may start
            bool taken = false;
            std::string why;
            std::thread failer([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
                s.fail();
            });
            const xfer_status st =
                rig.pipeline->submit(device.data(), host.data(), bytes, way, s.handle(), wait_host, &taken, &why);
            failer.join();
            EXPECT_TRUE(taken);
            xfer_status reported = st;
            std::string message = why;
            if (!wait_host) {
                EXPECT_EQ(XFER_SUCCESS, st);
                // The watchdog finds the failed stream and gives the copy up.
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (!rig.pipeline->take_stream_error(s.handle(), &reported, &message) &&
                       std::chrono::steady_clock::now() < deadline) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            }
            EXPECT_EQ(XFER_ERROR_BACKEND, reported);
            EXPECT_NE(std::string::npos, message.find("fake sticky fault")) << message;
            EXPECT_NE(std::string::npos, message.find(way == Way::to_device ? "to the device" : "to the host"))
                << message;
            rig.pipeline->close(); // returns: the copy was given up
            EXPECT_EQ(1u, rig.pipeline->counters().given_up);
            EXPECT_EQ(way == Way::to_host ? 1 : 0, rig.host_writes_done.load());
            EXPECT_TRUE(same_bytes(Bytes(bytes, 1), host)) << "a given-up copy wrote the user's memory";
        }
    }
}

TEST(StagingPipelineFailure, ARefusedDmaIsReportedAndTheStreamRunsOn) {
    for (Way way : {Way::to_device, Way::to_host}) {
        Rig rig(kDefaultShape);
        FakeStream s;
        const std::size_t bytes = 24 * MiB;
        Bytes host(bytes, 1);
        Bytes device(bytes, 2);
        rig.queue.refuse_copy(3); // the third chunk's DMA
        bool taken = false;
        std::string why;
        EXPECT_EQ(XFER_ERROR_BACKEND,
                  rig.pipeline->submit(device.data(), host.data(), bytes, way, s.handle(), false, &taken, &why));
        EXPECT_TRUE(taken) << "the pipeline had taken the copy: it ends its host writes itself";
        EXPECT_EQ(way == Way::to_host ? 1 : 0, rig.host_writes_done.load()) << "once, by the pipeline";
        EXPECT_NE(std::string::npos, why.find("fake cudaMemcpyAsync refused")) << why;
        // (Chunks queued before the refusal may have moved: a failed copy's destination is
        // undefined, as after a failed cudaMemcpyAsync.)
        EXPECT_TRUE(s.synchronize()) << "the waits queued before the refusal must open";
        // The pipeline still serves copies (the refused copy's slots are lost, not the arena).
        const Bytes data = random_bytes(2 * MiB, 41);
        Bytes out(2 * MiB, 0);
        rig.stage(out.data(), const_cast<unsigned char *>(data.data()), data.size(), Way::to_device, s);
        ASSERT_TRUE(s.synchronize());
        EXPECT_TRUE(same_bytes(data, out));
        EXPECT_EQ(1u, rig.pipeline->counters().given_up);
    }
}

TEST(StagingPipelineFailure, AbandonedCopiesTouchNoMemoryAfterwards) {
    // A copy to the host drains chunks while its stream fails part-way; once abandon() has
    // returned (as a failed synchronisation's caller would have it), no worker writes the
    // user's memory any more.
    for (int round = 0; round < 8; ++round) {
        const std::size_t bytes = 16 * MiB;
        const Bytes device = random_bytes(bytes, 51);
        Bytes host(bytes, 0);
        Rig rig(kDefaultShape, std::chrono::milliseconds(10000)); // the watchdog stays out of it
        FakeStream s; // destroyed first: a DMA it was running when it failed ends before the memory goes
        rig.stage(const_cast<unsigned char *>(device.data()), host.data(), bytes, Way::to_host, s);
        std::this_thread::sleep_for(std::chrono::microseconds(250 * (round % 4)));
        s.fail();
        rig.pipeline->abandon(s.handle(), XFER_ERROR_BACKEND, "test: the stream failed");
        const Bytes after_abandon = host;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        EXPECT_TRUE(same_bytes(after_abandon, host)) << "a worker wrote the user's memory after abandon()";
        EXPECT_EQ(1, rig.host_writes_done.load()) << "the abandoned copy ended its host writes once";
        xfer_status st = XFER_SUCCESS;
        std::string message;
        EXPECT_FALSE(rig.pipeline->take_stream_error(s.handle(), &st, &message))
            << "abandon()'s caller reports the failure; the stream keeps no second report: " << message;
        rig.pipeline->close();
    }
}

TEST(StagingPipelineFailure, AForgottenStreamIsNeverAskedAbout) {
    Rig rig(kDefaultShape, std::chrono::milliseconds(4)); // the watchdog asks every few ms
    const std::size_t bytes = 8 * MiB;
    Bytes host(bytes, 1);
    Bytes device(bytes, 0);
    void *gone = nullptr;
    {
        FakeStream s;
        s.hold(); // the copy stalls: the watchdog asks about the stream
        rig.stage(device.data(), host.data(), bytes, Way::to_device, s);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        EXPECT_GT(rig.queue.health_calls(), 0u);
        s.fail(); // as a failed synchronisation, then its caller's abandon and the destroy
        rig.pipeline->abandon(s.handle(), XFER_ERROR_BACKEND, "test: the stream failed");
        rig.pipeline->forget_stream(s.handle());
        gone = s.handle();
        rig.queue.forbid(gone);
    } // the stream is destroyed here
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    EXPECT_EQ(0u, rig.queue.forbidden_calls()) << "the watchdog asked about a destroyed stream";
    rig.pipeline->close();
}

// A copy of a range being page-locked asks the workers to demote what they read of it: only to
// the device, only with `demote` on; every byte still lands, and the source is left as it was.
TEST(StagingPipelineDemote, TheSourceOfACopyToTheDeviceIsDemotedOnlyWhenAskedAndOnlyWithDemoteOn) {
    for (bool demote : {true, false}) {
        Rig rig({"threads4_slots8", 4, 1 * MiB, 8, std::chrono::microseconds(0), 2, demote});
        FakeStream s;
        const std::size_t bytes = 6 * MiB + 123;
        const Bytes host = random_bytes(bytes, 21);
        const Bytes before = host;
        Bytes device(bytes, 0);
        Bytes back(bytes, 0);
        const auto submit = [&](void *dev, void *h, Way way, bool demote_source) {
            bool taken = false;
            std::string why;
            ASSERT_EQ(XFER_SUCCESS, rig.pipeline->submit(dev, h, bytes, way, s.handle(), false, &taken, &why,
                                                         XFER_REASON_REUSE, demote_source))
                << why;
            ASSERT_TRUE(taken);
        };
        submit(device.data(), const_cast<unsigned char *>(host.data()), Way::to_device, true);
        submit(device.data(), back.data(), Way::to_host, true); // to the host: nothing to demote
        ASSERT_TRUE(s.synchronize());
        EXPECT_TRUE(same_bytes(host, device)) << "demote " << demote;
        EXPECT_TRUE(same_bytes(host, back)) << "demote " << demote;
        EXPECT_TRUE(same_bytes(before, host)) << "the source is only read";
        submit(device.data(), const_cast<unsigned char *>(host.data()), Way::to_device, false);
        ASSERT_TRUE(s.synchronize());
        rig.pipeline->close();
        EXPECT_EQ(3u, rig.pipeline->counters().staged);
        EXPECT_EQ(demote ? 1u : 0u, rig.pipeline->counters().source_demoted) << "demote " << demote;
    }
}

TEST(StagingPipelineRoom, AFullArenaSendsTheCopyTheDirectWay) {
    Rig rig({"threads2_slots2", 2, 1 * MiB, 2});
    FakeStream held1;
    FakeStream held2;
    FakeStream free;
    const std::size_t bytes = 8 * MiB;
    Bytes host(bytes, 3);
    Bytes device(bytes, 0);
    Bytes device2(bytes, 0);
    Bytes device3(bytes, 0);
    held1.hold();
    held2.hold();
    // Each copy takes at most half the arena: two held copies fill it.
    rig.stage(device.data(), host.data(), bytes, Way::to_device, held1);
    rig.stage(device2.data(), host.data(), bytes, Way::to_device, held2);
    bool taken = true;
    std::string why;
    EXPECT_EQ(XFER_SUCCESS, rig.pipeline->submit(device3.data(), host.data(), bytes, Way::to_device, free.handle(),
                                                 false, &taken, &why));
    EXPECT_FALSE(taken);
    EXPECT_EQ(1u, rig.pipeline->counters().no_room);
    held1.release();
    held2.release();
    ASSERT_TRUE(held1.synchronize());
    ASSERT_TRUE(held2.synchronize());
    EXPECT_TRUE(same_bytes(host, device));
    EXPECT_TRUE(same_bytes(host, device2));
    // The slots come back once the copies are done.
    Bytes again(bytes, 0);
    rig.stage(again.data(), host.data(), bytes, Way::to_device, free);
    ASSERT_TRUE(free.synchronize());
    EXPECT_TRUE(same_bytes(host, again));
}

} // namespace

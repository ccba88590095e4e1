// SPDX-License-Identifier: Apache-2.0
// xfer_stress: N threads x M random operations against one backend, every byte verified.
//
//   xfer_stress [--backend NAME] [--threads N] [--ops M] [--seed S] [--watchdog SECONDS]
//               [--max-bytes BYTES]
//
// Three phases: (1) all threads share one context; (2) one context per thread; (3) threads
// share a context that one of them closes while the others still use it (they must see
// success or XFER_ERROR_INVALID_HANDLE, never a crash). Operations: buffer allocation,
// buffer copies both ways, raw and batched raw copies, events recorded on one stream and
// waited for on another, stream and event create/destroy with work queued, xfer_free with
// copies of the buffer (buffer copies and raw copies of its views) still queued, xfer_copy.
// Every byte that a completed operation moved is compared with what was written.
// A watchdog ends the run (exit 2) when no operation completes for --watchdog seconds; any
// wrong byte or unexpected status ends it with exit 1. Both print the seed to reproduce.
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <xfer/xfer.h>

namespace {

struct Options {
    std::string backend = "host";
    int threads = 8;
    long ops = 2000;
    std::uint64_t seed = 0;
    int watchdog_s = 60;
    std::size_t max_bytes = 1 << 20;
};

Options g_opt;
std::atomic<long> g_progress{0};
std::atomic<std::uint64_t> g_bytes_verified{0};
std::atomic<long> g_ops_done{0};
std::atomic<int> g_phase{0};
std::mutex g_print;

[[noreturn]] void fail(int thread, const char *what, const std::string &detail) {
    std::lock_guard<std::mutex> lock(g_print);
    std::fprintf(stderr, "xfer_stress: FAILED in phase %d, thread %d: %s: %s\n", g_phase.load(), thread, what,
                 detail.c_str());
    std::fprintf(stderr, "xfer_stress: reproduce with --backend %s --threads %d --ops %ld --seed %" PRIu64 "\n",
                 g_opt.backend.c_str(), g_opt.threads, g_opt.ops, g_opt.seed);
    std::fflush(stderr);
    std::_Exit(1);
}

void fill(unsigned char *p, std::size_t n, std::uint64_t key) {
    std::uint64_t x = key * 0x9E3779B97F4A7C15ull + 1;
    for (std::size_t i = 0; i < n; ++i) {
        if ((i & 7) == 0) {
            x ^= x >> 30;
            x *= 0xBF58476D1CE4E5B9ull;
            x ^= x >> 27;
        }
        p[i] = static_cast<unsigned char>(x >> ((i & 7) * 8));
    }
}

void verify(int thread, const char *what, const unsigned char *expected, const unsigned char *actual, std::size_t n) {
    if (std::memcmp(expected, actual, n) != 0) {
        std::size_t i = 0;
        while (expected[i] == actual[i]) ++i;
        fail(thread, what,
             "byte " + std::to_string(i) + " of " + std::to_string(n) + " is " + std::to_string(actual[i]) +
                 ", expected " + std::to_string(expected[i]));
    }
    g_bytes_verified += n;
}

// A call that must succeed; in phase 3 (close while in use) INVALID_HANDLE means the context
// went away under us, which the caller handles by returning false.
struct Checker {
    int thread;
    bool tolerate_closed;
    bool closed = false;
    bool ok(xfer_status st, const char *call) {
        if (st == XFER_SUCCESS) return true;
        if (tolerate_closed && st == XFER_ERROR_INVALID_HANDLE) {
            closed = true;
            return false;
        }
        fail(thread, call, std::string(xfer_status_string(st)) + ": " + xfer_last_error());
    }
};
#define CHECK(call) c.ok((call), #call)

// A thread's host memory for copies. It outlives the thread: in phase 3 a copy queued just
// before the close may still run after the thread has seen the context go away.
struct Scratch {
    std::vector<unsigned char> expected, out;
};

// One random operation on `ctx`. Returns false when the context is gone (phase 3).
bool one_op(xfer_context ctx, xfer_stream s1, xfer_stream s2, std::mt19937_64 &rng, Checker &c, bool touch_views,
            Scratch &scratch) {
    const std::size_t bytes = 1 + rng() % g_opt.max_bytes;
    const std::uint64_t key = rng();
    std::vector<unsigned char> &expected = scratch.expected, &out = scratch.out;
    fill(expected.data(), bytes, key);
    xfer_buffer b = nullptr;
    if (!CHECK(xfer_alloc(ctx, bytes, 0, &b))) return false;
    auto *dev = static_cast<unsigned char *>(xfer_device_ptr(b));
    auto *host = static_cast<unsigned char *>(xfer_host_ptr(b));
    if (dev == nullptr || host == nullptr) {
        if (!c.tolerate_closed) fail(c.thread, "xfer_device_ptr / xfer_host_ptr", xfer_last_error());
        c.closed = true;
        return false;
    }
    const int op = static_cast<int>(rng() % (touch_views ? 8 : 4));
    bool done = true;
    switch (op) {
    case 0: { // raw copies in, raw copy out, through the device view
        done = CHECK(xfer_memcpy_async(ctx, dev, expected.data(), bytes, XFER_COPY_HOST_TO_DEVICE, s1)) &&
               CHECK(xfer_memcpy_async(ctx, out.data(), dev, bytes, XFER_COPY_DEVICE_TO_HOST, s1)) &&
               CHECK(xfer_stream_synchronize(s1));
        if (done) verify(c.thread, "raw copy round trip", expected.data(), out.data(), bytes);
        break;
    }
    case 1: { // batched raw copies in pieces, event from s1 to s2, batched out on s2
        const std::size_t pieces = 1 + rng() % 16;
        std::vector<void *> dsts;
        std::vector<const void *> srcs;
        std::vector<std::size_t> sizes;
        std::vector<void *> back_dsts;
        std::vector<const void *> back_srcs;
        for (std::size_t off = 0, step = (bytes + pieces - 1) / pieces; off < bytes; off += step) {
            const std::size_t n = std::min(step, bytes - off);
            dsts.push_back(dev + off);
            srcs.push_back(expected.data() + off);
            back_dsts.push_back(out.data() + off);
            back_srcs.push_back(dev + off);
            sizes.push_back(n);
        }
        xfer_event e = nullptr;
        done = CHECK(xfer_event_create(ctx, XFER_EVENT_DISABLE_TIMING, &e)) &&
               CHECK(xfer_memcpy_batch_async(ctx, dsts.data(), srcs.data(), sizes.data(), sizes.size(),
                                             XFER_COPY_HOST_TO_DEVICE, s1)) &&
               CHECK(xfer_event_record(e, s1)) && CHECK(xfer_stream_wait_event(s2, e)) &&
               CHECK(xfer_event_destroy(e)) && // destroyed with a wait on it queued
               CHECK(xfer_memcpy_batch_async(ctx, back_dsts.data(), back_srcs.data(), sizes.data(), sizes.size(),
                                             XFER_COPY_DEVICE_TO_HOST, s2)) &&
               CHECK(xfer_stream_synchronize(s2));
        if (done) verify(c.thread, "batched copies across streams", expected.data(), out.data(), bytes);
        break;
    }
    case 2: { // free with a raw copy of its device view queued: the copy must still complete
        done = CHECK(xfer_memcpy_async(ctx, dev, expected.data(), bytes, XFER_COPY_HOST_TO_DEVICE, s1)) &&
               CHECK(xfer_memcpy_async(ctx, out.data(), dev, bytes, XFER_COPY_DEVICE_TO_HOST, s1)) &&
               CHECK(xfer_free(b));
        b = nullptr;
        done = done && CHECK(xfer_stream_synchronize(s1));
        if (done) verify(c.thread, "raw copy of a freed buffer's view", expected.data(), out.data(), bytes);
        break;
    }
    case 3: { // a stream created for the op and destroyed with work queued
        xfer_stream s = nullptr;
        done = CHECK(xfer_stream_create(ctx, &s)) &&
               CHECK(xfer_memcpy_async(ctx, dev, expected.data(), bytes, XFER_COPY_HOST_TO_DEVICE, s)) &&
               CHECK(xfer_memcpy_async(ctx, out.data(), dev, bytes, XFER_COPY_DEVICE_TO_HOST, s)) &&
               CHECK(xfer_stream_destroy(s));
        if (done) verify(c.thread, "stream destroyed with work queued", expected.data(), out.data(), bytes);
        break;
    }
    case 4:
    case 5: { // buffer copies both ways through the host view, timed events
        std::memcpy(host, expected.data(), bytes);
        xfer_event a = nullptr, z = nullptr;
        float ms = 0;
        done = CHECK(xfer_event_create(ctx, 0, &a)) && CHECK(xfer_event_create(ctx, 0, &z)) &&
               CHECK(xfer_event_record(a, s1)) && CHECK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, s1));
        if (done) {
            std::memset(out.data(), 0, bytes);
            done = CHECK(xfer_memcpy_async(ctx, out.data(), dev, bytes, XFER_COPY_DEVICE_TO_HOST, s1)) &&
                   CHECK(xfer_event_record(z, s1)) && CHECK(xfer_event_synchronize(z)) &&
                   CHECK(xfer_event_elapsed_ms(a, z, &ms)) && CHECK(xfer_event_destroy(a)) &&
                   CHECK(xfer_event_destroy(z));
        }
        if (done) verify(c.thread, "buffer copy to device", expected.data(), out.data(), bytes);
        if (done) {
            // Where the views are one memory (managed, zerocopy), clearing the host view would
            // clear the device view as well: the copy back then has the bytes to keep, not restore.
            xfer_context_info info{};
            const bool one_memory =
                xfer_context_get_info(ctx, &info) == XFER_SUCCESS && (info.caps & XFER_CAP_SHARED_VIEW) != 0;
            if (!one_memory) std::memset(host, 0, bytes);
            done = CHECK(xfer_copy(b, XFER_TO_HOST, 0, bytes));
            if (done) verify(c.thread, "xfer_copy to host", expected.data(), host, bytes);
        }
        break;
    }
    case 6: { // free with buffer copies queued on two streams
        std::memcpy(host, expected.data(), bytes);
        done = CHECK(xfer_copy_async(b, XFER_TO_DEVICE, 0, bytes, s1)) &&
               CHECK(xfer_memcpy_async(ctx, out.data(), host, bytes, XFER_COPY_HOST_TO_HOST, s2)) &&
               CHECK(xfer_free(b));
        b = nullptr;
        done = done && CHECK(xfer_stream_synchronize(s1)) && CHECK(xfer_stream_synchronize(s2));
        if (done) verify(c.thread, "raw copy of a freed buffer's host view", expected.data(), out.data(), bytes);
        break;
    }
    default: { // partial buffer copies at a random offset
        std::memcpy(host, expected.data(), bytes);
        const std::size_t offset = rng() % bytes;
        const std::size_t n = 1 + rng() % (bytes - offset);
        done = CHECK(xfer_copy_async(b, XFER_TO_DEVICE, offset, n, s2)) &&
               CHECK(xfer_memcpy_async(ctx, out.data(), dev + offset, n, XFER_COPY_DEVICE_TO_HOST, s2)) &&
               CHECK(xfer_stream_synchronize(s2));
        if (done) verify(c.thread, "partial buffer copy", expected.data() + offset, out.data(), n);
        break;
    }
    }
    if (b != nullptr && !c.closed) CHECK(xfer_free(b));
    g_progress.fetch_add(1);
    g_ops_done.fetch_add(1);
    return !c.closed;
}

void worker(int index, xfer_context shared, bool own_context, bool close_phase, std::atomic<bool> *close_now,
            Scratch *scratch) {
    std::mt19937_64 rng(g_opt.seed * 1000003u + static_cast<std::uint64_t>(g_phase.load()) * 7919u + index);
    Checker c{index, close_phase};
    xfer_context ctx = shared;
    if (own_context && !c.ok(xfer_open(g_opt.backend.c_str(), 0, &ctx), "xfer_open")) return;
    xfer_stream s1 = nullptr, s2 = nullptr;
    if (!c.ok(xfer_stream_create(ctx, &s1), "xfer_stream_create") ||
        !c.ok(xfer_stream_create(ctx, &s2), "xfer_stream_create"))
        return;
    for (long i = 0; i < g_opt.ops; ++i) {
        if (close_phase && index == 0 && i == g_opt.ops / 4) {
            // Close while the other threads are in the middle of their operations.
            close_now->store(true);
            c.ok(xfer_close(ctx), "xfer_close (while in use)");
            return;
        }
        // Phase 3 keeps to raw copies: a closed context frees its buffers, and touching a
        // view after that would be the program's own use after free.
        if (!one_op(ctx, s1, s2, rng, c, !close_phase, *scratch)) return;
    }
    if (!close_phase || !close_now->load()) {
        c.ok(xfer_stream_destroy(s1), "xfer_stream_destroy");
        c.ok(xfer_stream_destroy(s2), "xfer_stream_destroy");
    }
    if (own_context) c.ok(xfer_close(ctx), "xfer_close");
}

void run_phase(int phase) {
    g_phase = phase;
    xfer_context shared = nullptr;
    Checker c{-1, false};
    if (phase != 2) c.ok(xfer_open(g_opt.backend.c_str(), 0, &shared), "xfer_open");
    std::atomic<bool> close_now{false};
    std::vector<Scratch> scratch(static_cast<std::size_t>(g_opt.threads));
    for (Scratch &m : scratch) {
        m.expected.resize(g_opt.max_bytes);
        m.out.resize(g_opt.max_bytes);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < g_opt.threads; ++t) {
        threads.emplace_back(worker, t, shared, phase == 2, phase == 3, &close_now,
                             &scratch[static_cast<std::size_t>(t)]);
    }
    for (auto &t : threads) t.join();
    if (phase == 1) c.ok(xfer_close(shared), "xfer_close");
    if (phase == 3 && g_opt.threads > 0 && xfer_close(shared) != XFER_ERROR_INVALID_HANDLE) {
        fail(-1, "phase 3", "the context closed by thread 0 was still open");
    }
}

void watchdog(std::atomic<bool> *finished) {
    long last = -1;
    auto since = std::chrono::steady_clock::now();
    while (!finished->load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const long now = g_progress.load();
        if (now != last) {
            last = now;
            since = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - since > std::chrono::seconds(g_opt.watchdog_s)) {
            fail(-1, "watchdog", "no operation completed for " + std::to_string(g_opt.watchdog_s) + " s (a hang)");
        }
    }
}

bool parse(int argc, char **argv) {
    g_opt.seed = std::random_device{}();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (v == nullptr) return false;
        if (a == "--backend")
            g_opt.backend = v;
        else if (a == "--threads")
            g_opt.threads = std::atoi(v);
        else if (a == "--ops")
            g_opt.ops = std::atol(v);
        else if (a == "--seed")
            g_opt.seed = std::strtoull(v, nullptr, 10);
        else if (a == "--watchdog")
            g_opt.watchdog_s = std::atoi(v);
        else if (a == "--max-bytes")
            g_opt.max_bytes = std::strtoull(v, nullptr, 10);
        else
            return false;
        ++i;
    }
    return g_opt.threads > 0 && g_opt.ops > 0 && g_opt.watchdog_s > 0 && g_opt.max_bytes > 0;
}

} // namespace

int main(int argc, char **argv) {
    if (!parse(argc, argv)) {
        std::fprintf(stderr, "usage: xfer_stress [--backend NAME] [--threads N] [--ops M] [--seed S] "
                             "[--watchdog SECONDS] [--max-bytes BYTES]\n");
        return 64;
    }
    std::printf(
        "xfer_stress: backend %s, %d threads x %ld operations x 3 phases, buffers up to %zu bytes, seed %" PRIu64 "\n",
        g_opt.backend.c_str(), g_opt.threads, g_opt.ops, g_opt.max_bytes, g_opt.seed);
    std::fflush(stdout);
    std::atomic<bool> finished{false};
    std::thread dog(watchdog, &finished);
    const auto start = std::chrono::steady_clock::now();
    for (int phase = 1; phase <= 3; ++phase) run_phase(phase);
    finished = true;
    dog.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("xfer_stress: PASSED: %ld operations, %" PRIu64 " bytes verified, %.1f s, seed %" PRIu64 "\n",
                g_ops_done.load(), g_bytes_verified.load(), s, g_opt.seed);
    return 0;
}

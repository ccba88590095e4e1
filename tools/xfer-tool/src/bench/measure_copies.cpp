// SPDX-License-Identifier: Apache-2.0
// Whole-range copies: xfer against the raw call, against another backend, after an idle gap,
// its host time, user (malloc) memory, and managed memory to the host.
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/measure_support.hpp"
#include "bench/measures.hpp"
#include "units.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

std::string label(const std::string &what, xfer_direction dir, std::uint64_t bytes) {
    return what + " " + direction_name(dir) + " " + format_size(bytes);
}

// Where a copy of the buffer in `dir` reads and writes.
struct Ends {
    void *dst;
    const void *src;
};
Ends ends(const Buffer &buf, xfer_direction dir) {
    return dir == XFER_TO_DEVICE ? Ends{buf.device(), buf.host()} : Ends{buf.host(), buf.device()};
}

} // namespace

void measure_copy_vs_raw(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                         std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    RawPath raw(b);
    const Buffer &buf = env.buffer(backend, bytes);
    const std::size_t n = buf.bytes();
    const Ends e = ends(buf, dir);
    const Pairs ms =
        env.pairs([&] { return xfer_copy_ms(b, buf, dir, n, label("xfer", dir, bytes)); },
                  [&] { return raw.timed_copy(e.dst, e.src, n, copy_kind(dir), label("raw", dir, bytes)); });
    row.xfer = bench_rate("xfer_copy_async", bytes, ms.xfer);
    row.reference = bench_rate(std::string("raw ") + raw.copy_name(), bytes, ms.reference);
    set_speed_ratio(row, ms, std::string("raw ") + raw.copy_name());

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(bytes);
    verify_copy(raw, buf, expected, dir, n, "xfer_copy_async", v, [&] { xfer_copy_ms(b, buf, dir, n, "check"); });
    verify_copy(raw, buf, expected, dir, n, raw.copy_name(), v, [&] { raw.copy(e.dst, e.src, n, copy_kind(dir)); });
    row.verification = v.result();
}

void measure_copy_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                             xfer_direction dir, std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend), &r = env.backend(reference);
    const Buffer &buf = env.buffer(backend, bytes), &ref_buf = env.buffer(reference, bytes);
    const std::size_t n = buf.bytes();
    const Pairs ms = env.pairs([&] { return xfer_copy_ms(b, buf, dir, n, label(backend, dir, bytes)); },
                               [&] { return xfer_copy_ms(r, ref_buf, dir, n, label(reference, dir, bytes)); });
    row.xfer = bench_rate("xfer " + backend, bytes, ms.xfer);
    row.reference = bench_rate("xfer " + reference, bytes, ms.reference);
    set_speed_ratio(row, ms, reference);

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(bytes);
    RawPath raw_b(b), raw_r(r);
    verify_copy(raw_b, buf, expected, dir, n, backend, v, [&] { xfer_copy_ms(b, buf, dir, n, "check"); });
    verify_copy(raw_r, ref_buf, expected, dir, n, reference, v, [&] { xfer_copy_ms(r, ref_buf, dir, n, "check"); });
    row.verification = v.result();
}

void measure_after_idle_gap(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                            std::uint64_t bytes, int gap_ms) {
    BenchEnv::Backend &b = env.backend(backend);
    const Buffer &buf = env.buffer(backend, bytes);
    const std::size_t n = buf.bytes();
    const std::string gap = std::to_string(gap_ms) + " ms idle";
    const Pairs ms = env.pairs(
        [&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms)); // idle, then the copy alone is timed
            return xfer_copy_ms(b, buf, dir, n, label("after " + gap, dir, bytes));
        },
        [&] { return xfer_copy_ms(b, buf, dir, n, label("back to back", dir, bytes)); });
    row.xfer = bench_rate("xfer_copy_async after " + gap, bytes, ms.xfer);
    row.reference = bench_rate("xfer_copy_async back to back", bytes, ms.reference);
    set_speed_ratio(row, ms, "the same copy back to back");

    Verifier v;
    RawPath raw(b);
    verify_copy(raw, buf, env.data(bytes), dir, n, "xfer_copy_async", v,
                [&] { xfer_copy_ms(b, buf, dir, n, "check"); });
    row.verification = v.result();
}

void measure_after_host_work(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                             std::uint64_t bytes, std::uint64_t evict_bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    const Buffer &buf = env.buffer(backend, bytes);
    const std::size_t n = buf.bytes();
    // Other work of the program: reading memory the copy does not touch, so that the copy's
    // source has left the caches (untimed), as it has in a program between two steps.
    std::vector<unsigned char> other(evict_bytes, 1);
    volatile unsigned long sink = 0;
    const auto other_work = [&] {
        unsigned long sum = 0;
        for (std::size_t i = 0; i < other.size(); i += 64) sum += other[i];
        sink = sink + sum;
    };
    const std::string work = "reading " + format_size(evict_bytes) + " of other memory";
    const Pairs ms = env.pairs(
        [&] {
            other_work();
            return xfer_copy_ms(b, buf, dir, n, label("after other work", dir, bytes));
        },
        [&] { return xfer_copy_ms(b, buf, dir, n, label("back to back", dir, bytes)); });
    row.xfer = bench_rate("xfer_copy_async after " + work, bytes, ms.xfer);
    row.reference = bench_rate("xfer_copy_async back to back", bytes, ms.reference);
    set_speed_ratio(row, ms, "the same copy back to back");

    Verifier v;
    RawPath raw(b);
    verify_copy(raw, buf, env.data(bytes), dir, n, "xfer_copy_async", v,
                [&] { xfer_copy_ms(b, buf, dir, n, "check"); });
    row.verification = v.result();
}

void measure_async_host_time(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                             std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    const Buffer &buf = env.buffer(backend, bytes);
    const std::size_t n = buf.bytes();
    std::vector<double> call_ms, copy_ms, share;
    env.repeat([&](bool warmup) {
        // Host clock only: the call's return, then the stream's end, from the same start.
        const Clock::time_point t0 = Clock::now();
        check(xfer_copy_async(buf.get(), dir, 0, n, b.stream->get()), "xfer_copy_async");
        const Clock::time_point t1 = Clock::now();
        b.stream->synchronize();
        const Clock::time_point t2 = Clock::now();
        if (warmup) return;
        call_ms.push_back(ms_between(t0, t1));
        copy_ms.push_back(ms_between(t0, t2));
        share.push_back(ms_between(t0, t1) / ms_between(t0, t2) * 100.0);
    });
    row.xfer = bench_value("xfer_copy_async call (host)", "ms", call_ms);
    row.reference = bench_value("copy done (stream synchronised)", "ms", copy_ms);
    set_ratio(row, "%", "call's host time / time until the stream has finished, per repeat", share);

    Verifier v;
    RawPath raw(b);
    verify_copy(raw, buf, env.data(bytes), dir, n, "xfer_copy_async", v,
                [&] { xfer_copy_ms(b, buf, dir, n, "check"); });
    row.verification = v.result();
}

void measure_user_memory(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    RawPath raw(b);
    const Buffer &buf = env.buffer(backend, bytes);
    unsigned char *user = env.user_memory(bytes);
    const std::size_t n = buf.bytes();
    const xfer_context ctx = b.testbed->context().get();
    auto xfer_once = [&](const std::string &name) {
        return time_on_stream(*b.testbed, *b.stream, name, "copy", n, [&] {
            check(xfer_memcpy_async(ctx, buf.device(), user, n, XFER_COPY_HOST_TO_DEVICE, b.stream->get()),
                  "xfer_memcpy_async(from malloc'd memory)");
        });
    };
    // Warm-up included: a registration paid once per range is paid there, as in a user's loop.
    const Pairs ms = env.pairs([&] { return xfer_once(label("xfer malloc", XFER_TO_DEVICE, bytes)); },
                               [&] {
                                   return raw.timed_copy(buf.device(), buf.host(), n, XFER_COPY_HOST_TO_DEVICE,
                                                         label("raw buffer host view", XFER_TO_DEVICE, bytes));
                               });
    row.xfer = bench_rate("xfer_memcpy_async from malloc", bytes, ms.xfer);
    row.reference =
        bench_rate(std::string("raw ") + raw.copy_name() + " from the " + backend + " host view", bytes, ms.reference);
    set_speed_ratio(row, ms, "raw copy from the buffer's host view");

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(bytes);
    verify_copy(raw, buf, expected, XFER_TO_DEVICE, n, "xfer_memcpy_async from malloc", v, [&] { xfer_once("check"); });
    verify_copy(raw, buf, expected, XFER_TO_DEVICE, n, "raw copy from the host view", v,
                [&] { raw.copy(buf.device(), buf.host(), n, XFER_COPY_HOST_TO_DEVICE); });
    row.verification = v.result();
}

void measure_managed_to_host(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    Testbed &s = *b.testbed;
    if (!s.migrates())
        throw XferError(XFER_ERROR_NOT_SUPPORTED, "backend '" + backend + "' does not migrate pages (not managed)");
    RawPath raw(b);
    const Buffer &buf = env.buffer(backend, bytes);
    const std::size_t n = buf.bytes();
    // Each timed move starts with every page on the device (placed untimed).
    auto xfer_once = [&](const std::string &name) {
        place_for(s, buf, XFER_TO_HOST, *b.stream);
        return xfer_copy_ms(b, buf, XFER_TO_HOST, n, name);
    };
    auto raw_once = [&](const std::string &name) {
        place_for(s, buf, XFER_TO_HOST, *b.stream);
        return raw.timed_prefetch(buf.device(), n, XFER_TO_HOST, name);
    };
    const Pairs ms = env.pairs([&] { return xfer_once(label("xfer", XFER_TO_HOST, bytes)); },
                               [&] { return raw_once(label("raw prefetch", XFER_TO_HOST, bytes)); });
    row.xfer = bench_rate("xfer_copy_async to host", bytes, ms.xfer);
    row.reference = bench_rate("raw cudaMemPrefetchAsync to host", bytes, ms.reference);
    set_speed_ratio(row, ms, "raw cudaMemPrefetchAsync");

    // One memory: what matters is that the bytes survive the moves, read on the host.
    Verifier v;
    const std::vector<unsigned char> &expected = env.data(bytes);
    xfer_once("check");
    v.bytes("after xfer_copy_async to host", buf.host(), expected.data(), n);
    raw_once("check");
    v.bytes("after cudaMemPrefetchAsync to host", buf.host(), expected.data(), n);
    if (std::memcmp(buf.host(), expected.data(), n) != 0) std::memcpy(buf.host(), expected.data(), n);
    row.verification = v.result();
}

} // namespace xfer::tool

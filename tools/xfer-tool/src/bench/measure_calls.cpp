// SPDX-License-Identifier: Apache-2.0
// Many calls: the host cost of one small copy, and scattered pieces in one batch call.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "bench/measure_support.hpp"
#include "bench/measures.hpp"
#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

// Calls per timed batch and batches per repeat: 2048 calls a repeat, the stream drained
// between batches so no call waits for room in a full queue.
constexpr std::size_t kCallsPerBatch = 256;
constexpr int kCallBatches = 8;

// The buffer size the small copies are taken from.
constexpr std::uint64_t kCallBufferBytes = 64 * 1024;

// The small copy the per-call rows time: between two buffers, so that on shared-view backends
// (managed, zero-copy) source and destination are still different memory; there the runtime
// infers the kind, as a user would let it.
struct SmallCopy {
    void *dst = nullptr;
    const void *src = nullptr;
    xfer_copy_kind kind = XFER_COPY_DEFAULT;
    std::size_t bytes = 0;
};

SmallCopy small_copy(BenchEnv &env, const std::string &backend, const Testbed &s, xfer_direction dir, std::size_t bytes,
                     const char *what) {
    if (bytes == 0 || bytes > kCallBufferBytes)
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(bytes) + " bytes is not in (0, 64 KiB]");
    const Buffer &a = env.buffer(backend, kCallBufferBytes, 0), &c = env.buffer(backend, kCallBufferBytes, 1);
    SmallCopy copy;
    copy.kind = s.shared_view() ? XFER_COPY_DEFAULT : copy_kind(dir);
    copy.dst = dir == XFER_TO_DEVICE ? static_cast<void *>(c.device()) : static_cast<void *>(a.host());
    copy.src = dir == XFER_TO_DEVICE ? static_cast<const void *>(a.host()) : static_cast<const void *>(c.device());
    copy.bytes = bytes;
    return copy;
}

constexpr double kCallsPerRepeat = static_cast<double>(kCallsPerBatch) * kCallBatches;

// Host time per xfer_memcpy_async call, in us, over one repeat's calls.
double xfer_call_us(xfer_context ctx, const SmallCopy &c, const Stream &stream) {
    double ns = 0;
    for (int batch = 0; batch < kCallBatches; ++batch) {
        const Clock::time_point t0 = Clock::now();
        for (std::size_t i = 0; i < kCallsPerBatch; ++i)
            check(xfer_memcpy_async(ctx, c.dst, c.src, c.bytes, c.kind, stream.get()), "xfer_memcpy_async");
        const Clock::time_point t1 = Clock::now();
        ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
        stream.synchronize();
    }
    return ns / kCallsPerRepeat / 1000.0;
}

// One side's small copy, once, into a cleared destination.
void verify_small_copy(RawPath &raw, const Testbed &s, xfer_direction dir, const SmallCopy &c,
                       const std::vector<unsigned char> &expected, const std::string &what, Verifier &v,
                       const std::function<void()> &copy_once) {
    unsigned char got[64] = {};
    if (dir == XFER_TO_DEVICE) {
        raw.clear_device(c.dst, c.bytes);
        copy_once();
        raw.copy(got, c.dst, c.bytes, s.shared_view() ? XFER_COPY_DEFAULT : XFER_COPY_DEVICE_TO_HOST);
    } else {
        std::memset(c.dst, 0, c.bytes);
        copy_once();
        std::memcpy(got, c.dst, c.bytes);
    }
    v.bytes(what, got, expected.data(), std::min<std::size_t>(c.bytes, sizeof got));
}

// The observer the observer rows install: it only adds up the copies its records report, so
// the row can check that it saw every copy. Runs inside each copy call, on its thread.
struct ObservedCopies {
    std::uint64_t copies = 0;
};

void count_copies(const xfer_copy_record *record, void *user_data) {
    static_cast<ObservedCopies *>(user_data)->copies += record->copies;
}

// Leaves the context without an observer however the row ends: later rows on the same
// context measure without one.
class ObserverGuard {
  public:
    explicit ObserverGuard(xfer_context ctx) : ctx_(ctx) {}
    ~ObserverGuard() { (void)xfer_set_copy_observer(ctx_, nullptr, nullptr); }
    ObserverGuard(const ObserverGuard &) = delete;
    ObserverGuard &operator=(const ObserverGuard &) = delete;

  private:
    xfer_context ctx_;
};

} // namespace

void measure_call_overhead(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                           std::size_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    Testbed &s = *b.testbed;
    RawPath raw(b);
    const SmallCopy c = small_copy(env, backend, s, dir, bytes, "call overhead");
    const xfer_context ctx = s.context().get();

    // Statistics are always on (xfer.h): what this row measures includes their counting.
    auto xfer_once = [&] { return xfer_call_us(ctx, c, *b.stream); };
    auto raw_once = [&] {
        double ns = 0;
        for (int batch = 0; batch < kCallBatches; ++batch) {
            ns += raw.call_ns(c.dst, c.src, c.bytes, c.kind, kCallsPerBatch);
            raw.synchronize();
        }
        return ns / kCallsPerRepeat / 1000.0;
    };
    const Pairs us = env.pairs(xfer_once, raw_once);
    row.xfer = bench_value("xfer_memcpy_async (statistics on), host time per call", "us", us.xfer);
    row.reference = bench_value(std::string("raw ") + raw.copy_name() + ", host time per call", "us", us.reference);
    std::vector<double> extra;
    for (std::size_t i = 0; i < us.xfer.size(); ++i) extra.push_back(us.xfer[i] - us.reference[i]);
    set_ratio(row, "us",
              "xfer us - raw us per call, per pair (" + std::to_string(kCallBatches) + " x " +
                  std::to_string(kCallsPerBatch) + " calls of " + std::to_string(bytes) + " B each)",
              extra);

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(kCallBufferBytes);
    verify_small_copy(raw, s, dir, c, expected, "xfer_memcpy_async", v, [&] {
        check(xfer_memcpy_async(ctx, c.dst, c.src, c.bytes, c.kind, b.stream->get()), "xfer_memcpy_async");
        b.stream->synchronize();
    });
    verify_small_copy(raw, s, dir, c, expected, raw.copy_name(), v, [&] { raw.copy(c.dst, c.src, c.bytes, c.kind); });
    row.verification = v.result();
}

void measure_observer_cost(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                           std::size_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    Testbed &s = *b.testbed;
    RawPath raw(b);
    const SmallCopy c = small_copy(env, backend, s, dir, bytes, "observer cost");
    const xfer_context ctx = s.context().get();
    ObserverGuard guard(ctx);
    ObservedCopies observed;

    // Each side sets the observer it is about, so the pair differs in that alone (without one
    // also when XFER_LOG=copies installed the copy log at xfer_open).
    auto observed_once = [&] {
        check(xfer_set_copy_observer(ctx, count_copies, &observed), "xfer_set_copy_observer");
        return xfer_call_us(ctx, c, *b.stream);
    };
    auto plain_once = [&] {
        check(xfer_set_copy_observer(ctx, nullptr, nullptr), "xfer_set_copy_observer");
        return xfer_call_us(ctx, c, *b.stream);
    };
    const Pairs us = env.pairs(observed_once, plain_once);
    row.xfer = bench_value("xfer_memcpy_async with a no-op copy observer, host time per call", "us", us.xfer);
    row.reference = bench_value("xfer_memcpy_async without an observer, host time per call", "us", us.reference);
    std::vector<double> extra;
    for (std::size_t i = 0; i < us.xfer.size(); ++i) extra.push_back(us.xfer[i] - us.reference[i]);
    set_ratio(row, "us",
              "us with the observer - us without, per copy, per pair (" + std::to_string(kCallBatches) + " x " +
                  std::to_string(kCallsPerBatch) + " calls of " + std::to_string(bytes) + " B each, one copy a call)",
              extra);

    // The observer must have seen every copy of its side: one record per call, one copy each.
    const int runs = env.options().warmup + env.options().repeats;
    const std::uint64_t made = static_cast<std::uint64_t>(runs) * kCallBatches * kCallsPerBatch;
    if (observed.copies != made)
        throw std::runtime_error("the copy observer's records count " + std::to_string(observed.copies) +
                                 " copies of the " + std::to_string(made) + " made with it installed");

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(kCallBufferBytes);
    verify_small_copy(raw, s, dir, c, expected, "xfer_memcpy_async with the observer", v, [&] {
        check(xfer_set_copy_observer(ctx, count_copies, &observed), "xfer_set_copy_observer");
        check(xfer_memcpy_async(ctx, c.dst, c.src, c.bytes, c.kind, b.stream->get()), "xfer_memcpy_async");
        b.stream->synchronize();
    });
    row.verification = v.result();
}

namespace {

// `count` pieces of `piece` bytes at distinct random slots of a region twice their size, on
// both sides (independent slots): host slot host_slots[i] <-> device slot device_slots[i].
struct Scatter {
    std::vector<std::size_t> host_slots, device_slots;
};

Scatter make_scatter(std::size_t count, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    auto pick = [&] {
        std::vector<std::size_t> slots(2 * count);
        std::iota(slots.begin(), slots.end(), std::size_t{0});
        std::shuffle(slots.begin(), slots.end(), engine);
        slots.resize(count);
        return slots;
    };
    Scatter s;
    s.host_slots = pick();
    s.device_slots = pick();
    return s;
}

Pieces scatter_pieces(const Scatter &sc, const Buffer &buf, std::size_t piece, xfer_direction dir) {
    Pieces p;
    for (std::size_t i = 0; i < sc.host_slots.size(); ++i) {
        unsigned char *h = buf.host() + sc.host_slots[i] * piece;
        unsigned char *d = buf.device() + sc.device_slots[i] * piece;
        p.dsts.push_back(dir == XFER_TO_DEVICE ? d : h);
        p.srcs.push_back(dir == XFER_TO_DEVICE ? h : d);
        p.sizes.push_back(piece);
    }
    return p;
}

// Verifies that `run_copy` (which waits) moved every piece: the destination region cleared,
// the copy, then each destination piece compared with the source piece it came from.
void verify_scatter(RawPath &raw, const Buffer &buf, const std::vector<unsigned char> &expected, const Scatter &sc,
                    std::size_t piece, xfer_direction dir, const std::string &what, Verifier &v,
                    const std::function<void()> &run_copy) {
    const std::size_t region = buf.bytes();
    std::vector<unsigned char> dst_view(region);
    if (dir == XFER_TO_DEVICE) {
        raw.clear_device(buf.device(), region);
        run_copy();
        raw.copy(dst_view.data(), buf.device(), region, XFER_COPY_DEVICE_TO_HOST);
    } else {
        std::memset(buf.host(), 0, region);
        run_copy();
        std::memcpy(dst_view.data(), buf.host(), region);
    }
    const auto &dst_slots = dir == XFER_TO_DEVICE ? sc.device_slots : sc.host_slots;
    const auto &src_slots = dir == XFER_TO_DEVICE ? sc.host_slots : sc.device_slots;
    const std::size_t count = dst_slots.size();
    std::vector<unsigned char> got(count * piece), want(count * piece);
    for (std::size_t i = 0; i < count; ++i) {
        std::memcpy(got.data() + i * piece, dst_view.data() + dst_slots[i] * piece, piece);
        std::memcpy(want.data() + i * piece, expected.data() + src_slots[i] * piece, piece);
    }
    v.bytes(what + " (" + std::to_string(count) + " pieces, gathered)", got.data(), want.data(), got.size());
    // The views back to their data for the rows that follow.
    if (dir == XFER_TO_DEVICE)
        raw.copy(buf.device(), buf.host(), region, XFER_COPY_HOST_TO_DEVICE);
    else
        std::memcpy(buf.host(), expected.data(), region);
}

} // namespace

void measure_batch(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir, std::size_t count,
                   std::size_t piece, bool coalesced) {
    BenchEnv::Backend &b = env.backend(backend);
    Testbed &s = *b.testbed;
    RawPath raw(b);
    const std::uint64_t total = static_cast<std::uint64_t>(count) * piece;
    const Buffer &buf = env.buffer(backend, 2 * total);
    const Scatter sc = make_scatter(count, derive_seed(env.options().seed, 7));
    const Pieces pieces = scatter_pieces(sc, buf, piece, dir);
    const xfer_copy_kind kind = copy_kind(dir);
    const xfer_context ctx = s.context().get();
    const std::string what = std::to_string(count) + " x " + format_size(piece) + " " + direction_name(dir);

    auto batch_once = [&](const std::string &name) {
        return time_on_stream(s, *b.stream, name, "copy", total, [&] {
            check(xfer_memcpy_batch_async(ctx, pieces.dsts.data(), pieces.srcs.data(), pieces.sizes.data(), count, kind,
                                          b.stream->get()),
                  "xfer_memcpy_batch_async");
        });
    };
    // The coalesced copy: the same number of bytes from the start of both views.
    void *dst0 = dir == XFER_TO_DEVICE ? buf.device() : buf.host();
    const void *src0 = dir == XFER_TO_DEVICE ? buf.host() : buf.device();
    auto reference_once = [&](const std::string &name) {
        return coalesced ? raw.timed_copy(dst0, src0, total, kind, name) : raw.timed_loop(pieces, kind, name);
    };
    const std::string ref_label =
        coalesced ? std::string("raw ") + raw.copy_name() + " of " + format_size(total) + " (one copy)"
                  : std::string("raw ") + raw.copy_name() + " loop (one call per piece)";
    const Pairs ms = env.pairs([&] { return batch_once("batch " + what); },
                               [&] { return reference_once((coalesced ? "coalesced " : "loop ") + what); });
    row.xfer = bench_value("xfer_memcpy_batch_async", "ms", ms.xfer);
    row.reference = bench_value(ref_label, "ms", ms.reference);
    set_speed_ratio(row, ms, coalesced ? "coalesced copy" : "loop of single copies");

    Verifier v;
    const std::vector<unsigned char> &expected = env.data(2 * total);
    verify_scatter(raw, buf, expected, sc, piece, dir, "xfer_memcpy_batch_async", v, [&] { batch_once("check"); });
    if (coalesced)
        verify_copy(raw, buf, expected, dir, total, "coalesced copy", v, [&] { raw.copy(dst0, src0, total, kind); });
    else
        verify_scatter(raw, buf, expected, sc, piece, dir, "raw loop", v,
                       [&] { raw.timed_loop(pieces, kind, "check"); });
    row.verification = v.result();
}

} // namespace xfer::tool

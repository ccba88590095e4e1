// SPDX-License-Identifier: Apache-2.0
// User memory used the three ways a program uses it: copied once (a one-off load), copied again
// and again (a training loop's inputs), and in many small pieces. The arrays are the program's
// own (anonymous mappings, filled from the run's data), a fresh one for every repeat, so that
// each repeat starts where a program starts: xfer has never seen that memory.
#include <sys/mman.h>

#include <cstring>

#include "bench/measure_support.hpp"
#include "bench/measures.hpp"
#include "units.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

std::string label(const std::string &what, xfer_direction dir, std::uint64_t bytes) {
    return what + " " + direction_name(dir) + " " + format_size(bytes);
}

// An array of the program's: a fresh anonymous mapping holding data(bytes). Whatever xfer
// page-locked of it is released (xfer_unregister) before it is unmapped, as a program that hands
// memory back to the system does.
class UserArray {
  public:
    UserArray(BenchEnv &env, xfer_context ctx, std::uint64_t bytes) : ctx_(ctx), bytes_(bytes) {
        void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw XferError(XFER_ERROR_OUT_OF_MEMORY, "mmap(" + std::to_string(bytes) + " bytes) for a user array");
        p_ = static_cast<unsigned char *>(p);
        std::memcpy(p_, env.data(bytes).data(), bytes); // every page touched: no fault is timed
    }
    ~UserArray() {
        (void)xfer_unregister(ctx_, p_); // XFER_ERROR_INVALID_ARGUMENT where nothing was page-locked
        ::munmap(p_, bytes_);
    }
    UserArray(const UserArray &) = delete;
    UserArray &operator=(const UserArray &) = delete;
    unsigned char *get() const { return p_; }

  private:
    xfer_context ctx_;
    std::uint64_t bytes_;
    unsigned char *p_ = nullptr;
};

// One xfer_memcpy_async between `user` and `device` in `dir`, waited for; event-timed ms.
double xfer_user_ms(BenchEnv::Backend &b, unsigned char *user, void *device, std::uint64_t bytes, xfer_direction dir,
                    const std::string &name) {
    const xfer_context ctx = b.testbed->context().get();
    return time_on_stream(*b.testbed, *b.stream, name, "copy", bytes, [&] {
        check(xfer_memcpy_async(ctx, dir == XFER_TO_DEVICE ? device : user, dir == XFER_TO_DEVICE ? user : device,
                                bytes, copy_kind(dir), b.stream->get()),
              "xfer_memcpy_async(user memory)");
    });
}

// Checks, untimed, that xfer moves a fresh user array's bytes in `dir`.
void verify_user_copy(BenchEnv &env, BenchEnv::Backend &b, RawPath &raw, const Buffer &buf, xfer_direction dir,
                      std::uint64_t bytes, Verifier &v) {
    const std::vector<unsigned char> &expected = env.data(bytes);
    UserArray user(env, b.testbed->context().get(), bytes);
    if (dir == XFER_TO_DEVICE) {
        raw.clear_device(buf.device(), bytes);
        xfer_user_ms(b, user.get(), buf.device(), bytes, dir, "check");
        std::vector<unsigned char> back(bytes);
        raw.copy(back.data(), buf.device(), bytes, XFER_COPY_DEVICE_TO_HOST);
        v.bytes("xfer_memcpy_async from user memory", back.data(), expected.data(), bytes);
    } else {
        std::memset(user.get(), 0, bytes);
        xfer_user_ms(b, user.get(), buf.device(), bytes, dir, "check"); // the buffer's device view holds data(bytes)
        v.bytes("xfer_memcpy_async into user memory", user.get(), expected.data(), bytes);
    }
}

} // namespace

void measure_user_one_off_vs_raw(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                                 std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    RawPath raw(b);
    const Buffer &buf = env.buffer(backend, bytes);
    const xfer_context ctx = b.testbed->context().get();
    // Each side copies a fresh array of its own, made and filled the same way: a one-off copy
    // against a one-off copy. (The array xfer has just copied would give the raw call a second
    // copy, whose pages and lines the first one left warm.)
    const Pairs ms = env.pairs(
        [&] {
            UserArray user(env, ctx, bytes); // never seen by xfer: its first copy
            return xfer_user_ms(b, user.get(), buf.device(), bytes, dir, label("xfer one-off", dir, bytes));
        },
        [&] {
            UserArray user(env, ctx, bytes);
            unsigned char *u = user.get();
            return raw.timed_copy(dir == XFER_TO_DEVICE ? buf.device() : static_cast<void *>(u),
                                  dir == XFER_TO_DEVICE ? static_cast<const void *>(u) : buf.device(), bytes,
                                  copy_kind(dir), label("raw", dir, bytes));
        });
    row.xfer = bench_rate("xfer_memcpy_async, first copy of the array", bytes, ms.xfer);
    row.reference = bench_rate(std::string("raw ") + raw.copy_name() + ", first copy of an array", bytes, ms.reference);
    set_speed_ratio(row, ms, std::string("raw ") + raw.copy_name() + " of a fresh user array");
    Verifier v;
    verify_user_copy(env, b, raw, buf, dir, bytes, v);
    row.verification = v.result();
}

void measure_user_one_off_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend,
                                     const std::string &reference, xfer_direction dir, std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend), &r = env.backend(reference);
    const Buffer &buf = env.buffer(backend, bytes), &ref_buf = env.buffer(reference, bytes);
    const xfer_context ctx = b.testbed->context().get();
    const Pairs ms = env.pairs(
        [&] {
            UserArray user(env, ctx, bytes);
            return xfer_user_ms(b, user.get(), buf.device(), bytes, dir, label("xfer one-off", dir, bytes));
        },
        [&] { return xfer_copy_ms(r, ref_buf, dir, bytes, label(reference + " buffer", dir, bytes)); });
    row.xfer = bench_rate("xfer_memcpy_async on " + backend + ", first copy of the array", bytes, ms.xfer);
    row.reference = bench_rate("xfer_copy_async of a " + reference + " buffer", bytes, ms.reference);
    set_speed_ratio(row, ms, "the " + reference + " backend's buffer copy");
    Verifier v;
    RawPath raw(b);
    verify_user_copy(env, b, raw, buf, dir, bytes, v);
    row.verification = v.result();
}

void measure_user_reuse(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                        xfer_direction dir, std::uint64_t bytes, int copies, int timed_from) {
    BenchEnv::Backend &b = env.backend(backend), &r = env.backend(reference);
    const Buffer &buf = env.buffer(backend, bytes), &ref_buf = env.buffer(reference, bytes);
    const xfer_context ctx = b.testbed->context().get();
    const std::vector<unsigned char> &expected = env.data(bytes);
    Verifier v;
    const Pairs ms = env.pairs(
        [&] {
            // One array copied `copies` times, as a loop copies its inputs every step; the copies
            // from `timed_from` on are timed (the first ones may pay for a registration).
            UserArray user(env, ctx, bytes);
            double sum = 0;
            for (int k = 1; k <= copies; ++k) {
                const double t = xfer_user_ms(b, user.get(), buf.device(), bytes, dir,
                                              label("xfer copy " + std::to_string(k), dir, bytes));
                if (k >= timed_from) sum += t;
            }
            if (dir == XFER_TO_HOST) v.bytes("user memory after the copies to it", user.get(), expected.data(), bytes);
            return sum;
        },
        [&] {
            double sum = 0;
            for (int k = 1; k <= copies; ++k) {
                const double t = xfer_copy_ms(r, ref_buf, dir, bytes, label(reference + " copy", dir, bytes));
                if (k >= timed_from) sum += t;
            }
            return sum;
        });
    const std::uint64_t moved = bytes * std::uint64_t(copies - timed_from + 1);
    row.xfer = bench_rate("xfer_memcpy_async on " + backend + ", copies " + std::to_string(timed_from) + "-" +
                              std::to_string(copies) + " of one array",
                          moved, ms.xfer);
    row.reference = bench_rate("xfer_copy_async of a " + reference + " buffer, the same copies", moved, ms.reference);
    set_speed_ratio(row, ms, "the " + reference + " backend's buffer copies");
    RawPath raw(b);
    verify_user_copy(env, b, raw, buf, dir, bytes, v);
    row.verification = v.result();
}

void measure_user_small(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                        std::uint64_t piece, std::size_t count) {
    BenchEnv::Backend &b = env.backend(backend);
    RawPath raw(b);
    const std::uint64_t bytes = piece * count;
    const Buffer &buf = env.buffer(backend, bytes);
    const xfer_context ctx = b.testbed->context().get();
    UserArray user(env, ctx, bytes);
    Pieces pieces;
    for (std::size_t i = 0; i < count; ++i) {
        unsigned char *u = user.get() + i * piece;
        auto *d = static_cast<unsigned char *>(buf.device()) + i * piece;
        pieces.dsts.push_back(dir == XFER_TO_DEVICE ? static_cast<void *>(d) : static_cast<void *>(u));
        pieces.srcs.push_back(dir == XFER_TO_DEVICE ? static_cast<const void *>(u) : static_cast<const void *>(d));
        pieces.sizes.push_back(piece);
    }
    const Pairs ms = env.pairs(
        [&] {
            return time_on_stream(*b.testbed, *b.stream, label("xfer pieces", dir, bytes), "copy", bytes, [&] {
                for (std::size_t i = 0; i < count; ++i)
                    check(
                        xfer_memcpy_async(ctx, pieces.dsts[i], pieces.srcs[i], piece, copy_kind(dir), b.stream->get()),
                        "xfer_memcpy_async(a small piece of user memory)");
            });
        },
        [&] { return raw.timed_loop(pieces, copy_kind(dir), label("raw pieces", dir, bytes)); });
    row.xfer = bench_rate("xfer_memcpy_async per piece", bytes, ms.xfer);
    row.reference = bench_rate(std::string("raw ") + raw.copy_name() + " per piece", bytes, ms.reference);
    set_speed_ratio(row, ms, std::string("raw ") + raw.copy_name() + " per piece of the same memory");
    Verifier v;
    const std::vector<unsigned char> &expected = env.data(bytes);
    if (dir == XFER_TO_DEVICE) {
        std::vector<unsigned char> back(bytes);
        raw.copy(back.data(), buf.device(), bytes, XFER_COPY_DEVICE_TO_HOST);
        v.bytes("pieces copied to the device", back.data(), expected.data(), bytes);
    } else {
        v.bytes("pieces copied to the user memory", user.get(), expected.data(), bytes);
    }
    row.verification = v.result();
}

} // namespace xfer::tool

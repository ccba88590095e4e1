// SPDX-License-Identifier: Apache-2.0
// The public API's argument validation, driven by fuzz input on the host backend: handles
// (valid, NULL, freed, of another kind, arbitrary values), enum and flag values, sizes and
// offsets (including impossible ones), NULL and wrapping pointers. Every call must return a
// status -- never crash, hang or corrupt memory (ASan + UBSan watch). Pointers handed to raw
// copies are either scratch memory with sizes inside it, or values the core must refuse
// (NULL, or ranges that wrap around the address space, or sizes past PTRDIFF_MAX).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <xfer/xfer.h>

namespace {

constexpr std::size_t kScratch = 4096;

struct World {
    xfer_context ctx = nullptr;
    xfer_buffer buf = nullptr;
    xfer_stream stream = nullptr;
    xfer_event event = nullptr;
    xfer_buffer freed = nullptr; // a handle that was valid once
    unsigned char a[kScratch];
    unsigned char b[kScratch];
};

World &world() {
    static World *w = [] {
        auto *w = new World;
        if (xfer_open("host", 0, &w->ctx) != XFER_SUCCESS || xfer_alloc(w->ctx, kScratch, 0, &w->buf) != XFER_SUCCESS ||
            xfer_stream_create(w->ctx, &w->stream) != XFER_SUCCESS ||
            xfer_event_create(w->ctx, 0, &w->event) != XFER_SUCCESS ||
            xfer_alloc(w->ctx, 64, 0, &w->freed) != XFER_SUCCESS || xfer_free(w->freed) != XFER_SUCCESS) {
            std::abort();
        }
        return w;
    }();
    return *w;
}

template <class Handle>
Handle pick_handle(FuzzedDataProvider &in, Handle valid) {
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
        return valid;
    case 1:
        return nullptr;
    case 2:
        return reinterpret_cast<Handle>(world().freed); // freed, or a buffer where another kind is expected
    case 3:
        return reinterpret_cast<Handle>(world().event); // an event where another kind is expected (or valid)
    default:
        return reinterpret_cast<Handle>(in.ConsumeIntegral<std::uintptr_t>());
    }
}

// A pointer and a size that together are either inside scratch memory or refused by the core.
struct Range {
    void *p;
    std::size_t bytes;
    bool refused; // NULL, wrapping or impossibly large: the core must say no before copying
};

std::size_t impossible_size(FuzzedDataProvider &in) {
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0:
        return SIZE_MAX;
    case 1:
        return static_cast<std::size_t>(PTRDIFF_MAX) + 1 + in.ConsumeIntegralInRange<std::size_t>(0, 1000);
    default:
        return in.ConsumeIntegralInRange<std::size_t>(static_cast<std::size_t>(PTRDIFF_MAX) + 1, SIZE_MAX);
    }
}

Range pick_range(FuzzedDataProvider &in, unsigned char *scratch) {
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
        return {nullptr, in.ConsumeIntegralInRange<std::size_t>(0, kScratch), true};
    case 1: { // wraps: from near the end of the address space, past it
        const std::size_t before_end = in.ConsumeIntegralInRange<std::size_t>(1, 4096);
        return {reinterpret_cast<void *>(UINTPTR_MAX - before_end + 1),
                before_end + in.ConsumeIntegralInRange<std::size_t>(1, 4096), true};
    }
    case 2:
        return {scratch, impossible_size(in), true};
    default: {
        const std::size_t offset = in.ConsumeIntegralInRange<std::size_t>(0, kScratch);
        return {scratch + offset, in.ConsumeIntegralInRange<std::size_t>(0, kScratch - offset), false};
    }
    }
}

// Enum values a C caller may pass: 0..0x7fffffff (the *_FORCE_INT32 range; anything else is
// not representable in the enum and would be the harness's own undefined behaviour).
template <class Enum>
Enum any_enum(FuzzedDataProvider &in) {
    return static_cast<Enum>(in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int32_t>(0, 6)
                                              : in.ConsumeIntegral<std::int32_t>() & 0x7fffffff);
}

void noop(void *) {}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    World &w = world();
    FuzzedDataProvider in(data, size);
    while (in.remaining_bytes() > 0) {
        switch (in.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: {
            xfer_buffer b = nullptr;
            std::size_t bytes =
                in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(0, 1 << 16) : impossible_size(in);
            if (xfer_alloc(pick_handle(in, w.ctx), bytes, in.ConsumeIntegral<unsigned>(),
                           in.ConsumeBool() ? &b : nullptr) == XFER_SUCCESS) {
                if (b == nullptr || xfer_buffer_size(b) != bytes || xfer_free(b) != XFER_SUCCESS) std::abort();
            }
            break;
        }
        case 1:
            (void)xfer_copy_async(pick_handle(in, w.buf), any_enum<xfer_direction>(in),
                                  in.ConsumeIntegral<std::size_t>(), in.ConsumeIntegral<std::size_t>(),
                                  pick_handle(in, w.stream));
            break;
        case 2: {
            const Range dst = pick_range(in, w.a);
            const Range src = pick_range(in, w.b);
            // In scratch: the smaller size fits both; else the refused range's own size.
            const std::size_t bytes = dst.refused   ? dst.bytes
                                      : src.refused ? src.bytes
                                                    : std::min(dst.bytes, src.bytes);
            (void)xfer_memcpy_async(pick_handle(in, w.ctx), dst.p, src.p, bytes, any_enum<xfer_copy_kind>(in),
                                    pick_handle(in, w.stream));
            break;
        }
        case 3: {
            const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, 4);
            std::vector<void *> dsts(count);
            std::vector<const void *> srcs(count);
            std::vector<std::size_t> sizes(count);
            for (std::size_t i = 0; i < count; ++i) {
                // dst and src from the same scratch offsets, so one size fits both.
                const Range r = pick_range(in, w.a);
                dsts[i] = r.p;
                srcs[i] = r.p == nullptr || reinterpret_cast<unsigned char *>(r.p) < w.a ||
                                  reinterpret_cast<unsigned char *>(r.p) > w.a + kScratch
                              ? r.p
                              : w.b + (reinterpret_cast<unsigned char *>(r.p) - w.a);
                sizes[i] = r.bytes;
            }
            (void)xfer_memcpy_batch_async(pick_handle(in, w.ctx), in.ConsumeBool() ? dsts.data() : nullptr,
                                          in.ConsumeBool() ? srcs.data() : nullptr,
                                          in.ConsumeBool() ? sizes.data() : nullptr, count,
                                          any_enum<xfer_copy_kind>(in), pick_handle(in, w.stream));
            break;
        }
        case 4:
            (void)xfer_stream_query(pick_handle(in, w.stream));
            break;
        case 5:
            (void)xfer_stream_wait_event(pick_handle(in, w.stream), pick_handle(in, w.event));
            break;
        case 6:
            (void)xfer_event_record(pick_handle(in, w.event), pick_handle(in, w.stream));
            break;
        case 7: {
            float ms = 0;
            (void)xfer_event_elapsed_ms(pick_handle(in, w.event), pick_handle(in, w.event),
                                        in.ConsumeBool() ? &ms : nullptr);
            (void)xfer_event_query(pick_handle(in, w.event));
            break;
        }
        case 8:
            (void)xfer_stream_launch_host_func(pick_handle(in, w.stream), in.ConsumeBool() ? noop : nullptr, nullptr);
            break;
        default:
            (void)xfer_buffer_size(pick_handle(in, w.buf));
            (void)xfer_host_ptr(pick_handle(in, w.buf));
            (void)xfer_status_string(any_enum<xfer_status>(in));
            break;
        }
    }
    if (xfer_stream_synchronize(w.stream) != XFER_SUCCESS) std::abort();
    return 0;
}

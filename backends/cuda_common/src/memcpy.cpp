// SPDX-License-Identifier: Apache-2.0
// Raw copies: what memory each pointer is, whether the copy kind fits, and how each pair of
// memories moves (the copy engine, the backend's hooks for pageable memory, packed batches).
#include <algorithm>
#include <cstdint>
#include <vector>

#include <cuda.h> // the driver's types only; the entry point comes from the runtime

#include "batch.hpp"
#include "engine_copy.hpp"
#include "entries.hpp"
#include "host_copy.hpp"
#include "host_copy_team.hpp"
#include "host_range.hpp"
#include "known_memory.hpp"
#include "recent_extents.hpp"
#include "user_memory/registration_cache.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/driver_entry.hpp"
#include <xfer_plugin/paths.hpp>

// Copies are issued with the kind their classified pointers imply (engine_kind), and as
// cudaMemcpyDefault where no explicit kind fits: with unified addressing (every 64-bit Linux CUDA
// device) the driver knows each pointer's memory, and the device views of managed and zero-copy
// buffers are host-or-device memory that an explicit kind would misdescribe. The caller's kind
// is honoured as a check: a kind that contradicts the pointers is refused by name before
// anything is queued, and the batch (which has no kind at all) behaves exactly like single copies.

namespace xfer::cuda {

// ------------------------------------------------------------------- pointer memory

Memory classify(const void *ptr) noexcept {
    cudaPointerAttributes attrs{};
    if (cudaPointerGetAttributes(&attrs, ptr) != cudaSuccess) {
        // Runtimes before CUDA 11 answered cudaErrorInvalidValue for memory they did not know.
        (void)cudaGetLastError();
        return Memory::pageable;
    }
    switch (attrs.type) {
    case cudaMemoryTypeHost:
        return Memory::pinned_host;
    case cudaMemoryTypeDevice:
        return Memory::device;
    case cudaMemoryTypeManaged:
        return Memory::managed;
    default:
        return Memory::pageable;
    }
}

const char *memory_name(Memory m) noexcept {
    switch (m) {
    case Memory::pageable:
        return "pageable host memory";
    case Memory::pinned_host:
        return "page-locked host memory";
    case Memory::device:
        return "device memory";
    default:
        return "managed memory";
    }
}

const char *kind_mismatch(xfer_copy_kind kind, Memory dst, Memory src) noexcept {
    const bool dst_device_side = kind == XFER_COPY_HOST_TO_DEVICE || kind == XFER_COPY_DEVICE_TO_DEVICE;
    const bool src_device_side = kind == XFER_COPY_DEVICE_TO_HOST || kind == XFER_COPY_DEVICE_TO_DEVICE;
    const bool dst_host_side = kind == XFER_COPY_DEVICE_TO_HOST || kind == XFER_COPY_HOST_TO_HOST;
    const bool src_host_side = kind == XFER_COPY_HOST_TO_DEVICE || kind == XFER_COPY_HOST_TO_HOST;
    if (dst_device_side && dst == Memory::pageable) {
        return "the destination is pageable host memory, which the device cannot address";
    }
    if (src_device_side && src == Memory::pageable) {
        return "the source is pageable host memory, which the device cannot address";
    }
    if (dst_host_side && dst == Memory::device) {
        return "the destination is device memory, not host memory";
    }
    if (src_host_side && src == Memory::device) {
        return "the source is device memory, not host memory";
    }
    return nullptr;
}

// ---------------------------------------------------------------------- raw copies
namespace {

// What a copy's two pointers are: inside one of xfer's own buffers from what was recorded when
// it was allocated (known_memory.hpp, no driver call; both looked up with one look at the
// thread's cache), anywhere else from the driver.
void memory_of_pair(const void *dst, const void *src, Memory *to, Memory *from) noexcept {
    const known_memory::PairAnswer known = known_memory::find_pair(dst, src);
    *to = known.dst_known ? known.dst : classify(dst);
    *from = known.src_known ? known.src : classify(src);
}

// The explicit kind of a copy between classified pointers, where one describes them exactly:
// with cudaMemcpyDefault the driver looks both pointers up again on every call (most of a
// 4-byte copy's overhead over a raw call with its kind: docs/performance.md). Managed memory
// and mapped page-locked memory on the device side (zero-copy views) keep cudaMemcpyDefault.
cudaMemcpyKind engine_kind(Memory to, Memory from) noexcept {
    if (to == Memory::device && from == Memory::device) return cudaMemcpyDeviceToDevice;
    if (to == Memory::device && is_host_memory(from)) return cudaMemcpyHostToDevice;
    if (from == Memory::device && is_host_memory(to)) return cudaMemcpyDeviceToHost;
    return cudaMemcpyDefault;
}

const char *kind_name(xfer_copy_kind kind) {
    switch (kind) {
    case XFER_COPY_HOST_TO_HOST:
        return "cudaMemcpyHostToHost";
    case XFER_COPY_HOST_TO_DEVICE:
        return "cudaMemcpyHostToDevice";
    case XFER_COPY_DEVICE_TO_HOST:
        return "cudaMemcpyDeviceToHost";
    case XFER_COPY_DEVICE_TO_DEVICE:
        return "cudaMemcpyDeviceToDevice";
    default:
        return "cudaMemcpyDefault";
    }
}

// The batch call is missing or refused on this driver: one cudaMemcpyAsync per copy gives
// the same stream-ordered result, and a precise error naming the copy that failed.
bool batch_fallback_applies(cudaError_t err) {
    return err == cudaErrorNotSupported || err == cudaErrorCallRequiresNewerDriver || err == cudaErrorInvalidValue;
}

// Checks the pointers of copies [0, count) against `kind`; sets *any_pageable for the copies
// the copy engine takes. With `pack` (a batch), also the route of each copy (batch.hpp).
// cuPointerGetAttributes, which also tells the extent of the allocation (or registration) a
// pointer lies in; nullptr when this driver has none. Looked up once, through the runtime.
using PointerGetAttributes = CUresult(CUDAAPI *)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
PointerGetAttributes pointer_get_attributes() noexcept {
    static const PointerGetAttributes fn = driver_entry<PointerGetAttributes>("cuPointerGetAttributes", 7000);
    return fn;
}

// What the driver says of one pointer in one query: its memory type (0: memory the driver does
// not know), whether it is managed, and the extent of the allocation or registration it lies in
// (bytes 0: none).
struct PointerFacts {
    unsigned type = 0;
    unsigned managed = 0;
    CUdeviceptr start = 0;
    std::size_t bytes = 0;
};

// False when this driver has no cuPointerGetAttributes or the query failed.
bool pointer_facts(const void *ptr, PointerFacts *out) noexcept {
    const PointerGetAttributes query = pointer_get_attributes();
    if (query == nullptr) return false;
    CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void *values[] = {&out->type, &out->managed, &out->start, &out->bytes};
    return query(4, names, values, static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr))) == CUDA_SUCCESS;
}

// Classifies the pointers of one batch. Entries mostly point into a few allocations, so the
// allocations already seen (their extents, from cuPointerGetAttributes) answer for the
// entries inside them without a driver query: one query per pointer would be most of a
// 4096-entry batch's host time. Pageable memory has no extent to remember and is asked
// about each time (a cached registration could have been made there meanwhile: never assumed).
// Also tells an entry that starts in page-locked host memory made elsewhere (another context's
// registration cache page-locks whole pages, or the application's cudaHostRegister) and runs
// past its end: the driver refuses it in one piece, and a packing kernel would reach past the
// registered pages; it goes apart, as xfer_memcpy_async would copy it.
class BatchClassifier {
  public:
    // The memory at `ptr`; *past_end: [ptr, ptr + bytes) starts in page-locked memory that is
    // not one of xfer's buffers and runs past the registration (or allocation) holding it.
    Memory operator()(const void *ptr, std::size_t bytes, bool *past_end) noexcept {
        const auto p = reinterpret_cast<std::uintptr_t>(ptr);
        *past_end = false;
        // xfer's own buffers: a copy past a buffer's end is the caller's error, refused by name.
        // Their extents are kept here too, ahead of the thread's known-memory cache (which
        // checks for released buffers on every lookup: a cost per pointer, 8192 per batch).
        if (const Extent *e = own_.find(p)) return e->memory;
        if (const Extent *e = seen_.find(p)) return answer(*e, p, bytes, past_end);
        if (Extent e; known_memory::find_extent(ptr, &e)) return own_.add(e).memory;
        PointerFacts f;
        if (!pointer_facts(ptr, &f)) return classify(ptr);
        // Memory the driver does not know comes back as type 0: pageable, as classify() would
        // say (cudaMemoryTypeUnregistered), without asking the driver a second time.
        const Memory m = f.managed != 0                   ? Memory::managed
                         : f.type == CU_MEMORYTYPE_DEVICE ? Memory::device
                         : f.type == CU_MEMORYTYPE_HOST   ? Memory::pinned_host
                         : f.type == 0                    ? Memory::pageable
                                                          : classify(ptr);
        if (f.bytes == 0) return m; // no extent to remember (pageable memory)
        return answer(seen_.add(Extent{static_cast<std::uintptr_t>(f.start), f.bytes, m}), p, bytes, past_end);
    }

  private:
    static Memory answer(const Extent &e, std::uintptr_t p, std::size_t bytes, bool *past_end) noexcept {
        *past_end = e.memory == Memory::pinned_host && bytes > e.bytes - (p - e.start);
        return e.memory;
    }
    RecentExtents<8> seen_;
    RecentExtents<4> own_; // xfer's own buffers (known_memory), for the span of one batch call
};

// The entries that run past a registration made elsewhere (BatchClassifier) are listed in
// *apart, in batch order, and left out of *any_pageable and the routes (their route: engine).
xfer_status check_pointers(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                           xfer_copy_kind kind, bool *any_pageable, std::vector<size_t> *apart,
                           const PackConfig *pack = nullptr, Route *routes = nullptr,
                           std::vector<xfer_copy_path> *paths = nullptr) {
    *any_pageable = false;
    BatchClassifier classify_entry;
    for (size_t i = 0; i < count; ++i) {
        bool dst_past_end = false;
        bool src_past_end = false;
        const Memory dst = classify_entry(dsts[i], sizes[i], &dst_past_end);
        const Memory src = classify_entry(srcs[i], sizes[i], &src_past_end);
        if (const char *why = kind_mismatch(kind, dst, src)) {
            return fail(XFER_ERROR_BACKEND,
                        "cudaMemcpyBatchAsync(copy %zu of %zu: %zu bytes, %s): %s (%s <- %s); "
                        "nothing was queued",
                        i, count, sizes[i], kind_name(kind), why, memory_name(dst), memory_name(src));
        }
        if (paths != nullptr) {
            paths->push_back(path_of(dst, src)); // its path if the copy engine takes it
        }
        if (dst_past_end || src_past_end) {
            apart->push_back(i);
            if (routes != nullptr) {
                routes[i] = Route::engine;
            }
            continue;
        }
        const bool engine = pack == nullptr || (routes[i] = route_for(dst, src, sizes[i], *pack)) == Route::engine;
        *any_pageable = *any_pageable || (engine && (dst == Memory::pageable || src == Memory::pageable));
    }
    return XFER_SUCCESS;
}

xfer_status copy_each(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                      xfer_copy_kind kind, cudaStream_t stream) {
    for (size_t i = 0; i < count; ++i) {
        if (auto st = check(cudaMemcpyAsync(dsts[i], srcs[i], sizes[i], cudaMemcpyDefault, stream),
                            "cudaMemcpyAsync(copy %zu of a batch of %zu: %zu bytes, %s)", i, count, sizes[i],
                            kind_name(kind))) {
            return st;
        }
    }
    return XFER_SUCCESS;
}

// A copy touching pageable host memory. Between pageable memory and cudaMalloc memory it is
// copy_pageable's (the backend's hook, or the driver with stream order kept at no cost unless
// at risk). Everything else (host to host, managed or mapped memory on the device side) is
// rare and keeps the simple rule: wait for the stream, then let the driver copy.
xfer_status copy_touching_pageable(const Context &c, void *dst, const void *src, size_t bytes, xfer_copy_kind kind,
                                   Memory to, Memory from, cudaStream_t s, const user_memory::Decision &plan) {
    if (from == Memory::pageable && to == Memory::device) {
        return copy_pageable_planned(c, dst, const_cast<void *>(src), bytes, XFER_TO_DEVICE, s, plan, "pageable");
    }
    if (to == Memory::pageable && from == Memory::device) {
        return copy_pageable_planned(c, const_cast<void *>(src), dst, bytes, XFER_TO_HOST, s, plan, "pageable");
    }
    // Host to host, or managed memory: the driver's copy, with nothing faster for these memories.
    const xfer_copy_path path = path_of(to, from);
    if (auto st = plugin::take_path(
            path, path == XFER_PATH_MANAGED_COPY ? XFER_REASON_MEMORY : XFER_REASON_NO_FASTER_PATH, bytes)) {
        return st;
    }
    if (auto st = wait_before_pageable_copy(s)) {
        return st;
    }
    const auto copy = [&] { return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s); };
    return check(retry_if_straddled(c, dst, src, bytes, copy(), copy), "cudaMemcpyAsync(%zu bytes, %s)", bytes,
                 kind_name(kind));
}

// How far the registration (or page-locked allocation) holding `p` reaches past it; 0 when
// `p` is not page-locked memory or the driver cannot say.
std::size_t registered_bytes_from(const void *p) noexcept {
    PointerFacts f;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    if (!pointer_facts(p, &f) || f.type != CU_MEMORYTYPE_HOST || at - f.start >= f.bytes) {
        return 0;
    }
    return static_cast<std::size_t>(f.start + f.bytes - at);
}

// A copy between device memory and a host range that starts inside a registration made
// elsewhere (another context's registration cache page-locks whole pages, and a neighbouring
// buffer may share one; or the application's cudaHostRegister) and runs past its end: the driver
// refuses it (cudaErrorInvalidValue). It goes in pieces split where the host side's
// registrations end: registered pieces as DMA, the pieces between them as pageable copies
// (copy_touching_pageable, stream order kept as for any pageable copy).
// The same refusal comes for a copy that runs past the end of a page-locked allocation (a
// caller's error): that one must stay refused, never become a copy of the neighbouring memory.
// So the split runs only when the host pointer is not in one of xfer's own buffers (whose extent
// xfer knows) and every page of the host range is mapped; otherwise the driver's refusal
// (`refused`) is reported. If a later piece fails, the stream is waited for before the failure
// is returned, so no queued piece touches the caller's memory after the call.
xfer_status copy_across_registrations(const Context &c, void *dst, const void *src, size_t bytes, xfer_copy_kind kind,
                                      bool to_device, cudaStream_t s, cudaError_t refused) {
    constexpr std::size_t kPage = 4096;
    auto *host = static_cast<unsigned char *>(to_device ? const_cast<void *>(src) : dst);
    auto *device = static_cast<unsigned char *>(to_device ? dst : const_cast<void *>(src));
    if (Memory known = Memory::pageable; known_memory::find(host, &known) || !host_range_mapped(host, bytes)) {
        return check(refused, "cudaMemcpyAsync(%zu bytes, %s): the host range runs past the memory it starts in", bytes,
                     kind_name(kind));
    }
    // The pieces are planned first, so that every piece's path is taken before any is queued.
    struct Piece {
        std::size_t offset, bytes;
        bool registered;
    };
    std::vector<Piece> pieces;
    plugin::PathTally tally;
    for (std::size_t done = 0; done < bytes;) {
        unsigned char *p = host + done;
        std::size_t piece = std::min(registered_bytes_from(p), bytes - done);
        const bool registered = piece != 0;
        if (!registered) {
            // Unregistered up to the next page that is registered (or the end).
            const auto next_page = (reinterpret_cast<std::uintptr_t>(p) / kPage + 1) * kPage;
            piece = std::min<std::size_t>(next_page - reinterpret_cast<std::uintptr_t>(p), bytes - done);
            while (done + piece < bytes && registered_bytes_from(host + done + piece) == 0) {
                piece += std::min(kPage, bytes - done - piece);
            }
        }
        pieces.push_back(Piece{done, piece, registered});
        // The unregistered pieces go to the driver whatever the backend's pageable path: the
        // split is rare, and each piece's size is set by someone else's registration.
        tally.add(registered ? XFER_PATH_PINNED_DMA : XFER_PATH_DRIVER_PAGEABLE,
                  registered ? XFER_REASON_MEMORY : XFER_REASON_SPLIT, piece);
        done += piece;
    }
    if (auto st = tally.take_all()) {
        return st;
    }
    for (const Piece &pc : pieces) {
        unsigned char *p = host + pc.offset;
        unsigned char *dev = device + pc.offset;
        const xfer_status st =
            pc.registered
                ? check(cudaMemcpyAsync(to_device ? static_cast<void *>(dev) : static_cast<void *>(p),
                                        to_device ? static_cast<const void *>(p) : static_cast<const void *>(dev),
                                        pc.bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s),
                        "cudaMemcpyAsync(%zu of %zu bytes, %s, a piece inside another registration)", pc.bytes, bytes,
                        kind_name(kind))
                : copy_pageable_direct(c, dev, p, pc.bytes, to_device ? XFER_TO_DEVICE : XFER_TO_HOST, s, "pageable");
        if (st != XFER_SUCCESS) {
            if (pc.offset != 0) {
                (void)cudaStreamSynchronize(s); // the pieces already queued finish first
                (void)cudaGetLastError();
            }
            return st;
        }
    }
    return XFER_SUCCESS;
}

// One copy, as xfer_memcpy_async queues it (also a batch's entries that straddle a registration
// made elsewhere: copy_across_registrations).
xfer_status copy_one(const Context &c, void *dst, const void *src, size_t bytes, xfer_copy_kind kind, cudaStream_t s) {
    // A cached registration the copy straddles goes first: the driver refuses a copy across a
    // registration's end. Whether a cached range's pages changed is asked later: by the
    // registration cache for a copy it takes (after the DMA to the device, which only reads,
    // so a stale range's old pages cost a second copy, never a byte of anyone's memory; before
    // each piece's DMA to the host, whose pages may now belong to another mapping), and below,
    // before anything is queued, for a copy it does not take.
    user_memory::RegistrationCache &cache = *c.cache;
    if (cache.may_hold_ranges()) {
        cache.drop_stale(dst, bytes, false);
        cache.drop_stale(src, bytes, false);
    }
    // Each pointer is classified once (a driver query each, unless it lies in one of xfer's
    // own buffers) and the answer handed on.
    Memory to = Memory::pageable;
    Memory from = Memory::pageable;
    memory_of_pair(dst, src, &to, &from);
    const auto check_kind = [&]() -> xfer_status {
        const char *why = kind_mismatch(kind, to, from);
        return why == nullptr
                   ? XFER_SUCCESS
                   : fail(XFER_ERROR_BACKEND, "cudaMemcpyAsync(%zu bytes, %s): %s (%s <- %s); nothing was queued",
                          bytes, kind_name(kind), why, memory_name(to), memory_name(from));
    };
    if (auto st = check_kind()) {
        return st;
    }
    // Pageable memory: refused while the stream captures, before the registration cache or the
    // staging engine touch anything (every pageable path below goes through here).
    if (to == Memory::pageable || from == Memory::pageable) {
        if (auto st = refuse_pageable_while_capturing(s, bytes, "pageable host memory")) {
            return st;
        }
    }
    // Between host memory and device memory the registration cache answers first: a cached
    // range (which the driver reports page-locked) or one the copy policy page-locks now is
    // queued as DMA; otherwise the policy's plan says how the pageable copy goes.
    bool taken = false;
    const bool host_device =
        (is_host_memory(from) && to == Memory::device) || (is_host_memory(to) && from == Memory::device);
    const xfer_direction dir = to == Memory::device ? XFER_TO_DEVICE : XFER_TO_HOST;
    const bool host_pinned = (dir == XFER_TO_DEVICE ? from : to) == Memory::pinned_host;
    user_memory::Decision plan;
    if (host_device && cache.may_take(bytes) && (!host_pinned || cache.may_hold_ranges())) {
        if (auto st = cache.copy(dst, src, bytes, dir, host_pinned, false, s, &plan, &taken);
            st != XFER_SUCCESS || taken) {
            return st;
        }
    } else if (host_device) {
        plan = cache.plan_untracked(bytes, dir);
    }
    if (cache.may_hold_ranges()) {
        const bool dst_range_went = cache.drop_stale(dst, bytes);
        const bool src_range_went = cache.drop_stale(src, bytes);
        if (dst_range_went || src_range_went) {
            memory_of_pair(dst, src, &to, &from); // the driver's answer changed
            if (auto st = check_kind()) {
                return st;
            }
            if (host_device) plan = cache.plan_untracked(bytes, dir);
        }
    }
    if (to == Memory::pageable || from == Memory::pageable) {
        return copy_touching_pageable(c, dst, src, bytes, kind, to, from, s, plan);
    }
    const xfer_copy_path path = path_of(to, from);
    // Between page-locked and device memory the driver may refuse the copy in one piece (a
    // registration made elsewhere ends inside it): that copy goes in pieces, each taking its own
    // path. So this path is taken once the driver queued the copy; PINNED_DMA is never slow,
    // so no policy can refuse it, and taking it first would count split copies twice.
    if (!host_device) {
        if (auto st = plugin::take_path(path, XFER_REASON_MEMORY, bytes)) {
            return st;
        }
    }
    const cudaError_t err = engine_copy(dst, src, bytes, engine_kind(to, from), s);
    if (err == cudaErrorInvalidValue && host_device) {
        (void)cudaGetLastError(); // refused before anything was queued
        return copy_across_registrations(c, dst, src, bytes, kind, to == Memory::device, s, err);
    }
    if (host_device && err == cudaSuccess) {
        return plugin::take_path(path, XFER_REASON_MEMORY, bytes);
    }
    return check(err, "cudaMemcpyAsync(%zu bytes, %s)", bytes, kind_name(kind));
}

} // namespace

xfer_status memcpy_async(void *ctx, void *dst, const void *src, size_t bytes, xfer_copy_kind kind, void *stream) {
    return on_device("memcpy_async", ctx, [&](const Context &c) {
        return copy_one(c, dst, src, bytes, kind, static_cast<cudaStream_t>(stream));
    });
}

namespace {

// The copy-engine part of a batch.
xfer_status batch_on_engine(const Context &c, void *const *dsts, const void *const *srcs, const size_t *sizes,
                            size_t count, xfer_copy_kind kind, bool pageable, cudaStream_t s) {
    // Pageable memory: the same stream-order rule as a single copy, paid once per batch and
    // only when earlier work on the stream may still write host memory.
    if (pageable && c.host_writes.pending(s)) {
        if (auto st = wait_before_pageable_copy(s)) {
            return st;
        }
    }
    // One attribute set for the whole batch. srcAccessOrder Stream: sources are read in
    // stream order, which is xfer's contract (the faster "Any"/"DuringApiCall" orders let
    // the driver read a source before earlier work on the stream has written it).
    cudaMemcpyAttributes attrs{};
    attrs.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t first_index = 0;
    const cudaError_t err = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attrs, &first_index, 1, s);
    if (err == cudaSuccess) {
        return XFER_SUCCESS;
    }
    if (batch_fallback_applies(err)) {
        (void)cudaGetLastError();
        return copy_each(dsts, srcs, sizes, count, kind, s);
    }
    return check(err, "cudaMemcpyBatchAsync(%zu copies)", count);
}

// A batch queued while its stream captures a graph: every entry checked as the batch's are, one
// with pageable memory (or past a registration made elsewhere, which would be copied in
// pageable pieces) refused, the rest given to the copy engine, whose copies the graph records.
xfer_status captured_batch(const Context &c, void *const *dsts, const void *const *srcs, const size_t *sizes,
                           size_t count, xfer_copy_kind kind, cudaStream_t s) {
    bool pageable = false;
    std::vector<size_t> apart;
    std::vector<xfer_copy_path> paths;
    paths.reserve(count);
    if (auto st = check_pointers(dsts, srcs, sizes, count, kind, &pageable, &apart, nullptr, nullptr, &paths)) {
        return st;
    }
    if (pageable || !apart.empty()) {
        std::size_t total = 0;
        for (size_t i = 0; i < count; ++i) {
            total += sizes[i];
        }
        return refuse_pageable_while_capturing(s, total, "a batch with pageable host memory");
    }
    plugin::PathTally tally;
    for (size_t i = 0; i < count; ++i) {
        tally.add(paths[i], XFER_REASON_MEMORY, sizes[i]);
    }
    if (auto st = tally.take_all()) {
        return st;
    }
    return batch_on_engine(c, dsts, srcs, sizes, count, kind, false, s);
}

} // namespace

xfer_status memcpy_batch_async(void *ctx, void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                               xfer_copy_kind kind, void *stream) {
    return on_device("memcpy_batch_async", ctx, [&](const Context &c) {
        const auto s = static_cast<cudaStream_t>(stream);
        // While the stream captures a graph: no packing (its slots are made, reused and waited
        // for on the host) and no pageable entry; the copy engine's batch is captured as is.
        bool capture = false;
        if (auto st = capturing(s, &capture)) {
            return st;
        }
        if (capture) {
            return captured_batch(c, dsts, srcs, sizes, count, kind, s);
        }
        if (c.cache->may_hold_ranges()) {
            for (size_t i = 0; i < count; ++i) {
                c.cache->drop_stale(dsts[i], sizes[i]);
                c.cache->drop_stale(srcs[i], sizes[i]);
            }
        }
        // Small copies between host and device memory are packed (batch.hpp); the rest go to
        // the copy engine. Every entry is checked before anything is queued.
        const PackConfig pack = c.packer ? c.packer->config() : PackConfig{};
        const bool packing = pack.max_entry != 0;
        bool pageable = false;
        std::vector<size_t> apart;
        std::vector<Route> routes(packing ? count : 0);
        std::vector<xfer_copy_path> paths;
        paths.reserve(count);
        if (auto st = check_pointers(dsts, srcs, sizes, count, kind, &pageable, &apart, packing ? &pack : nullptr,
                                     packing ? routes.data() : nullptr, &paths)) {
            return st;
        }
        // The helpers of gathers during the call wake while the plan is made (host_copy_team.hpp);
        // none when earlier work on the stream may still write host memory (the gathers then run
        // in stream order, in host functions with teams of their own).
        std::unique_ptr<HostCopyTeam> team;
        if (packing && !c.host_writes.pending(s)) {
            std::size_t gather_bytes = 0;
            for (size_t i = 0; i < count; ++i) {
                gather_bytes += routes[i] == Route::staged_to_device ? sizes[i] : 0;
            }
            team = c.packer->start_team(gather_bytes);
        }
        const BatchPlan plan = packing ? plan_batch(routes.data(), sizes, count, pack) : BatchPlan{};
        // Every entry's path is taken before anything of the batch is queued; the entries past a
        // registration made elsewhere (copied as xfer_memcpy_async would) take theirs below.
        {
            plugin::PathTally tally;
            std::vector<bool> on_engine(packing ? count : 0, false);
            for (size_t i : plan.engine) on_engine[i] = true;
            for (size_t i = 0; i < count; ++i) {
                if (std::binary_search(apart.begin(), apart.end(), i)) continue;
                if (packing && !on_engine[i]) {
                    tally.add(XFER_PATH_PACKED, XFER_REASON_BELOW_CROSSOVER, sizes[i]);
                } else {
                    // A batch's pageable entries go to the driver: no staging engine for them.
                    const xfer_copy_path p = paths[i];
                    tally.add(p, p == XFER_PATH_DRIVER_PAGEABLE ? XFER_REASON_NO_FASTER_PATH : XFER_REASON_MEMORY,
                              sizes[i]);
                }
            }
            if (auto st = tally.take_all()) {
                return st;
            }
        }
        // Entries past a registration made elsewhere: each in pieces, as xfer_memcpy_async copies it.
        for (size_t i : apart) {
            if (auto st = copy_one(c, dsts[i], srcs[i], sizes[i], kind, s)) {
                return st;
            }
        }
        if (apart.empty() && (!packing || plan.engine.size() == count)) {
            return batch_on_engine(c, dsts, srcs, sizes, count, kind, pageable, s);
        }
        std::vector<void *> d;
        std::vector<const void *> f;
        std::vector<size_t> z;
        const auto add = [&](size_t i) {
            if (!std::binary_search(apart.begin(), apart.end(), i)) { // (in batch order, so sorted)
                d.push_back(dsts[i]);
                f.push_back(srcs[i]);
                z.push_back(sizes[i]);
            }
        };
        if (packing) {
            for (size_t i : plan.engine) add(i);
        } else {
            for (size_t i = 0; i < count; ++i) add(i);
        }
        if (!d.empty()) {
            if (auto st = batch_on_engine(c, d.data(), f.data(), z.data(), d.size(), kind, pageable, s)) {
                return st;
            }
        }
        return packing && !plan.groups.empty() ? c.packer->queue(plan, dsts, srcs, sizes, s, c.host_writes, team.get())
                                               : XFER_SUCCESS;
    });
}

} // namespace xfer::cuda

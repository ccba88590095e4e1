// SPDX-License-Identifier: Apache-2.0
// Raw copies between user pointers, single and batched.
#include <cstdint>
#include <string>
#include <utility>

#include "copy_ranges.hpp"
#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

void check_kind(const char *function, xfer_copy_kind kind) {
    if (kind < XFER_COPY_HOST_TO_HOST || kind > XFER_COPY_DEFAULT) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": kind ", static_cast<long long>(kind),
              " is not an xfer_copy_kind (0 = HOST_TO_HOST ... 4 = DEFAULT)");
    }
}

} // namespace

extern "C" {

XFER_API xfer_status xfer_memcpy_async(xfer_context ctx, void *dst, const void *src, std::size_t bytes,
                                       xfer_copy_kind kind, xfer_stream s) {
    constexpr const char *fn = "xfer_memcpy_async";
    return guard(fn, [&] {
        // The hottest entry point: its objects are looked up without shared_ptr copies.
        RecentObjects &recent = this_thread_objects();
        Context &context = lookup_ref<Context>(ctx, fn, "ctx", recent);
        Stream &stream = lookup_ref<Stream>(s, fn, "s", recent);
        require_same_context(context, stream, fn, "stream s", "context ctx");
        if (dst == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": dst is NULL");
        if (src == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": src is NULL");
        check_kind(fn, kind);
        if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": bytes is 0");
        check_ranges(fn, -1, dst, src, bytes);
        // The stream's gate alone keeps the context's native object alive (objects.hpp: the
        // exception to the lifetime rule).
        ObjectUse stream_use(stream, fn, "s");
        const xfer_backend_table &t = context.table();
        if (t.memcpy_async == nullptr) raise_not_supported(context, fn);
        CopyCall call(copy_context(context), fn, kind, bytes, 1, s);
        call_backend(*context.plugin, fn, "memcpy_async",
                     [&] { return t.memcpy_async(context.native, dst, src, bytes, kind, stream.native); });
        call.done();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_memcpy_batch_async(xfer_context ctx, void *const *dsts, const void *const *srcs,
                                             const std::size_t *sizes, std::size_t count, xfer_copy_kind kind,
                                             xfer_stream s) {
    constexpr const char *fn = "xfer_memcpy_batch_async";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        auto stream = lookup<Stream>(s, fn, "s");
        require_same_context(*context, *stream, fn, "stream s", "context ctx");
        if (dsts == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": dsts is NULL");
        if (srcs == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": srcs is NULL");
        if (sizes == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": sizes is NULL");
        check_kind(fn, kind);
        if (count == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": count is 0");
        // Every entry is checked before anything is queued: a batch is all or nothing.
        std::size_t total = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (dsts[i] == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": dsts[", i, "] is NULL");
            if (srcs[i] == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": srcs[", i, "] is NULL");
            if (sizes[i] == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": sizes[", i, "] is 0");
            if (!ranges_possible(dsts[i], srcs[i], sizes[i])) {
                raise_impossible_ranges(fn, static_cast<long long>(i), dsts[i], srcs[i], sizes[i]);
            }
            if (sizes[i] > kMaxObject - total) {
                raise(XFER_ERROR_INVALID_SIZE, fn, ": the sizes of entries 0..", i,
                      " add up to more than the largest possible object (", kMaxObject, " bytes)");
            }
            total += sizes[i];
        }
        // Overlaps once every size is known possible: an impossible size is the first thing to say.
        for (std::size_t i = 0; i < count; ++i) {
            if (!ranges_disjoint(dsts[i], srcs[i], sizes[i])) {
                raise_overlapping_ranges(fn, static_cast<long long>(i), dsts[i], srcs[i], sizes[i]);
            }
        }
        ContextUse use(*context, fn);
        ObjectUse stream_use(*stream, fn, "s");
        const xfer_backend_table &t = context->table();
        if (t.memcpy_batch_async == nullptr && t.memcpy_async == nullptr) raise_not_supported(*context, fn);
        CopyCall call(copy_context(*context), fn, kind, total, count, s);
        if (t.memcpy_batch_async != nullptr) {
            call_backend(*context->plugin, fn, "memcpy_batch_async", [&] {
                return t.memcpy_batch_async(context->native, dsts, srcs, sizes, count, kind, stream->native);
            });
        } else {
            // No batch entry: one memcpy_async each gives the same result in stream order.
            for (std::size_t i = 0; i < count; ++i) {
                call_backend(*context->plugin, fn, "memcpy_async", [&] {
                    return t.memcpy_async(context->native, dsts[i], srcs[i], sizes[i], kind, stream->native);
                });
            }
        }
        call.done();
        return XFER_SUCCESS;
    });
}

} // extern "C"

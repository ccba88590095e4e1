// SPDX-License-Identifier: Apache-2.0
// Peer copies between contexts on different devices of one backend, and the direct-access query.
//
// The two contexts are held open (shared) for the whole backend call in address order, the
// lock order objects.hpp sets for two objects of one kind, so two peer copies running the
// other way round and an xfer_close on either context can never deadlock.
#include <limits>
#include <optional>

#include "copy_ranges.hpp"
#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

// The checks every peer call makes on its pair of contexts: one backend, two devices.
void check_pair(const char *function, const Context &dst, const Context &src, const char *dst_name,
                const char *src_name) {
    if (dst.plugin != src.plugin) {
        raise(XFER_ERROR_INVALID_HANDLE, function, ": ", dst_name, " is a context of backend '", dst.name(), "' and ",
              src_name, " one of backend '", src.name(), "': peer copies need two contexts of one backend");
    }
    if (dst.device == src.device) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": ", dst_name, " and ", src_name, " are both bound to device ",
              dst.device, " of backend '", dst.name(),
              "': peer copies are between two devices (within one device use xfer_memcpy_async with "
              "XFER_COPY_DEVICE_TO_DEVICE)");
    }
}

// The stream must belong to one of the two contexts; returns that context.
Context &stream_owner(const char *function, Context &dst, Context &src, const Stream &s, const char *dst_name,
                      const char *src_name) {
    if (s.ctx.get() == &dst) return dst;
    if (s.ctx.get() == &src) return src;
    raise(XFER_ERROR_INVALID_HANDLE, function, ": stream s belongs to neither ", dst_name, " nor ", src_name,
          " (a peer copy runs on a stream of one of its two contexts)");
}

// ContextUse on two contexts, taken in address order.
class PairUse {
  public:
    PairUse(Context &a, Context &b, const char *function) {
        Context *first = &a < &b ? &a : &b;
        Context *second = &a < &b ? &b : &a;
        first_.emplace(*first, function);
        if (second != first) second_.emplace(*second, function);
    }

  private:
    std::optional<ContextUse> first_, second_;
};

const xfer_backend_table &peer_table(const Context &ctx, const char *function, bool has_entry) {
    if (!has_entry) raise_not_supported(ctx, function);
    return ctx.table();
}

void check_range(const char *function, const char *which, const Buffer &b, std::size_t offset, std::size_t bytes) {
    if (offset > std::numeric_limits<std::size_t>::max() - bytes) {
        raise(XFER_ERROR_INVALID_SIZE, function, ": ", which, "_offset ", offset, " + bytes ", bytes,
              " overflows size_t");
    }
    if (offset + bytes > b.bytes) {
        raise(XFER_ERROR_OUT_OF_BOUNDS, function, ": ", which, "_offset ", offset, " + bytes ", bytes, " = ",
              offset + bytes, " is past the end of the ", b.bytes, "-byte ", which, " buffer");
    }
}

} // namespace

extern "C" {

XFER_API xfer_status xfer_memcpy_peer_async(xfer_context dst_ctx, void *dst, xfer_context src_ctx, const void *src,
                                            std::size_t bytes, xfer_stream s) {
    constexpr const char *fn = "xfer_memcpy_peer_async";
    return guard(fn, [&] {
        auto d = lookup<Context>(dst_ctx, fn, "dst_ctx");
        auto c = lookup<Context>(src_ctx, fn, "src_ctx");
        auto stream = lookup<Stream>(s, fn, "s");
        check_pair(fn, *d, *c, "dst_ctx", "src_ctx");
        Context &owner = stream_owner(fn, *d, *c, *stream, "dst_ctx", "src_ctx");
        if (dst == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": dst is NULL");
        if (src == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": src is NULL");
        if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": bytes is 0");
        check_ranges(fn, -1, dst, src, bytes);
        PairUse use(*d, *c, fn);
        ObjectUse stream_use(*stream, fn, "s");
        const xfer_backend_table &t = peer_table(*d, fn, d->table().memcpy_peer_async != nullptr);
        CopyCall call(copy_context(owner), fn, XFER_COPY_DEVICE_TO_DEVICE, bytes, 1, s);
        call_backend(*d->plugin, fn, "memcpy_peer_async", [&] {
            return t.memcpy_peer_async(d->native, dst, c->native, src, bytes, owner.native, stream->native);
        });
        call.done();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_copy_peer_async(xfer_buffer dst, std::size_t dst_offset, xfer_buffer src,
                                          std::size_t src_offset, std::size_t bytes, xfer_stream s) {
    constexpr const char *fn = "xfer_copy_peer_async";
    return guard(fn, [&] {
        auto db = lookup<Buffer>(dst, fn, "dst");
        auto sb = lookup<Buffer>(src, fn, "src");
        auto stream = lookup<Stream>(s, fn, "s");
        Context &d = *db->ctx;
        Context &c = *sb->ctx;
        check_pair(fn, d, c, "dst's context", "src's context");
        Context &owner = stream_owner(fn, d, c, *stream, "dst's context", "src's context");
        if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": bytes is 0");
        check_range(fn, "dst", *db, dst_offset, bytes);
        check_range(fn, "src", *sb, src_offset, bytes);
        PairUse use(d, c, fn);
        // Different devices, so two different buffers; locked in address order (objects.hpp).
        const bool dst_first = db.get() < sb.get();
        ObjectUse first_use(dst_first ? *db : *sb, fn, dst_first ? "dst" : "src");
        ObjectUse second_use(dst_first ? *sb : *db, fn, dst_first ? "src" : "dst");
        ObjectUse stream_use(*stream, fn, "s");
        const xfer_backend_table &t = peer_table(d, fn, d.table().buffer_copy_peer_async != nullptr);
        CopyCall call(copy_context(owner), fn, XFER_COPY_DEVICE_TO_DEVICE, bytes, 1, s);
        call_backend(*d.plugin, fn, "buffer_copy_peer_async", [&] {
            return t.buffer_copy_peer_async(d.native, db->native, dst_offset, c.native, sb->native, src_offset, bytes,
                                            owner.native, stream->native);
        });
        call.done();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_device_can_access_peer(xfer_context ctx, xfer_context peer, int *can_access) {
    constexpr const char *fn = "xfer_device_can_access_peer";
    return guard(fn, [&] {
        auto a = lookup<Context>(ctx, fn, "ctx");
        auto b = lookup<Context>(peer, fn, "peer");
        if (can_access == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": can_access is NULL");
        check_pair(fn, *a, *b, "ctx", "peer");
        PairUse use(*a, *b, fn);
        const xfer_backend_table &t = peer_table(*a, fn, a->table().device_can_access_peer != nullptr);
        int answer = 0;
        call_backend(*a->plugin, fn, "device_can_access_peer",
                     [&] { return t.device_can_access_peer(a->native, b->native, &answer); });
        *can_access = answer != 0 ? 1 : 0;
        return XFER_SUCCESS;
    });
}

} // extern "C"

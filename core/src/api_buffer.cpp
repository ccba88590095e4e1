// SPDX-License-Identifier: Apache-2.0
// Buffers: allocation, views, and copies between the host and the device view.
#include <cstdint>
#include <limits>

#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

namespace xfer::core {
namespace {

constexpr unsigned kKnownAllocFlags =
    XFER_ALLOC_READ_MOSTLY | XFER_ALLOC_PREFER_DEVICE | XFER_ALLOC_PREFER_HOST | XFER_ALLOC_SHAREABLE;

void check_alloc_flags(unsigned flags) {
    if ((flags & ~kKnownAllocFlags) != 0) {
        raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_alloc: flags 0x", std::hex, flags, " has unknown bits 0x",
              flags & ~kKnownAllocFlags,
              " (known: XFER_ALLOC_READ_MOSTLY 0x1, XFER_ALLOC_PREFER_DEVICE 0x2, XFER_ALLOC_PREFER_HOST 0x4, "
              "XFER_ALLOC_SHAREABLE 0x8)");
    }
    if ((flags & XFER_ALLOC_PREFER_DEVICE) != 0 && (flags & XFER_ALLOC_PREFER_HOST) != 0) {
        raise(XFER_ERROR_INVALID_ARGUMENT,
              "xfer_alloc: XFER_ALLOC_PREFER_DEVICE and XFER_ALLOC_PREFER_HOST exclude each other");
    }
}

// The checks every buffer copy shares; the backend sees only in-range requests.
void check_copy(const char *function, const Buffer &b, xfer_direction dir, std::size_t offset, std::size_t bytes) {
    if (dir != XFER_TO_DEVICE && dir != XFER_TO_HOST) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": dir ", static_cast<long long>(dir),
              " is not XFER_TO_DEVICE (1) or XFER_TO_HOST (2)");
    }
    if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, function, ": bytes is 0");
    if (offset > std::numeric_limits<std::size_t>::max() - bytes) {
        raise(XFER_ERROR_INVALID_SIZE, function, ": offset ", offset, " + bytes ", bytes, " overflows size_t");
    }
    if (offset + bytes > b.bytes) {
        raise(XFER_ERROR_OUT_OF_BOUNDS, function, ": offset ", offset, " + bytes ", bytes, " = ", offset + bytes,
              " is past the end of the ", b.bytes, "-byte buffer");
    }
}

// The stream xfer_copy uses, created on first use. One per context: xfer_copy waits for it,
// so callers never observe it, and creating one per call would cost a stream per copy.
void *internal_stream(Context &ctx) {
    std::lock_guard<std::mutex> lock(ctx.internal_stream_mutex);
    if (ctx.internal_stream == nullptr) {
        void *stream = nullptr;
        call_backend(*ctx.plugin, "xfer_copy", "stream_create",
                     [&] { return ctx.table().stream_create(ctx.native, &stream); });
        ctx.internal_stream = stream;
    }
    return ctx.internal_stream;
}

} // namespace
} // namespace xfer::core

using namespace xfer::core;

extern "C" {

XFER_API xfer_status xfer_alloc(xfer_context ctx, std::size_t bytes, unsigned flags, xfer_buffer *buf) {
    return guard("xfer_alloc", [&] {
        auto context = lookup<Context>(ctx, "xfer_alloc", "ctx");
        if (buf == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, "xfer_alloc: buf is NULL");
        check_alloc_flags(flags);
        if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, "xfer_alloc: bytes is 0");
        if (bytes > static_cast<std::size_t>(PTRDIFF_MAX)) {
            raise(XFER_ERROR_INVALID_SIZE, "xfer_alloc: ", bytes, " bytes exceeds the largest possible object (",
                  PTRDIFF_MAX, " bytes)");
        }
        ContextUse use(*context, "xfer_alloc");
        if ((flags & XFER_ALLOC_SHAREABLE) != 0 && context->table().buffer_export == nullptr) {
            raise(XFER_ERROR_NOT_SUPPORTED, "xfer_alloc: backend '", context->name(),
                  "' cannot make buffers another process imports (XFER_ALLOC_SHAREABLE); nothing was allocated");
        }
        auto record = std::make_shared<Buffer>();
        record->ctx = context;
        record->bytes = bytes;
        const std::uint64_t handle = create_child(record, "xfer_alloc", [&](Buffer &b) {
            return context->table().buffer_alloc(context->native, bytes, flags, &b.native, &b.host_view,
                                                 &b.device_view);
        });
        *buf = reinterpret_cast<xfer_buffer>(handle);
        tell_buffer(*context, XFER_MEMORY_ALLOCATED, *record);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_free(xfer_buffer buf) {
    return guard("xfer_free", [&] {
        refuse_in_host_function("xfer_free");
        retire(lookup<Buffer>(buf, "xfer_free", "buf"), buf, "xfer_free", "buf");
        return XFER_SUCCESS;
    });
}

XFER_API void *xfer_host_ptr(xfer_buffer buf) {
    return guard_value<void *>("xfer_host_ptr", nullptr,
                               [&] { return lookup<Buffer>(buf, "xfer_host_ptr", "buf")->host_view; });
}

XFER_API void *xfer_device_ptr(xfer_buffer buf) {
    return guard_value<void *>("xfer_device_ptr", nullptr,
                               [&] { return lookup<Buffer>(buf, "xfer_device_ptr", "buf")->device_view; });
}

XFER_API std::size_t xfer_buffer_size(xfer_buffer buf) {
    return guard_value<std::size_t>("xfer_buffer_size", 0,
                                    [&] { return lookup<Buffer>(buf, "xfer_buffer_size", "buf")->bytes; });
}

XFER_API xfer_status xfer_copy_async(xfer_buffer buf, xfer_direction dir, std::size_t offset, std::size_t bytes,
                                     xfer_stream s) {
    constexpr const char *fn = "xfer_copy_async";
    return guard(fn, [&] {
        auto b = lookup<Buffer>(buf, fn, "buf");
        auto stream = lookup<Stream>(s, fn, "s");
        require_same_context(*b->ctx, *stream, fn, "stream s", "buffer buf");
        check_copy(fn, *b, dir, offset, bytes);
        Context &c = *b->ctx;
        ContextUse use(c, fn);
        ObjectUse buffer_use(*b, fn, "buf");
        ObjectUse stream_use(*stream, fn, "s");
        const xfer_backend_table &t = c.table();
        if (t.buffer_copy_async == nullptr) raise_not_supported(c, fn);
        CopyCall call(copy_context(c), fn, kind_of(dir), bytes, 1, s);
        call_backend(*c.plugin, fn, "buffer_copy_async",
                     [&] { return t.buffer_copy_async(c.native, b->native, dir, offset, bytes, stream->native); });
        call.done();
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_copy(xfer_buffer buf, xfer_direction dir, std::size_t offset, std::size_t bytes) {
    constexpr const char *fn = "xfer_copy";
    return guard(fn, [&] {
        refuse_in_host_function(fn);
        auto b = lookup<Buffer>(buf, fn, "buf");
        check_copy(fn, *b, dir, offset, bytes);
        Context &c = *b->ctx;
        ContextUse use(c, fn);
        ObjectUse buffer_use(*b, fn, "buf");
        const xfer_backend_table &t = c.table();
        if (t.buffer_copy_async == nullptr) raise_not_supported(c, fn);
        void *stream = internal_stream(c);
        CopyCall call(copy_context(c), fn, kind_of(dir), bytes, 1, nullptr);
        call_backend(*c.plugin, fn, "buffer_copy_async",
                     [&] { return t.buffer_copy_async(c.native, b->native, dir, offset, bytes, stream); });
        call_backend(*c.plugin, fn, "stream_synchronize", [&] { return t.stream_synchronize(c.native, stream); });
        call.done();
        return XFER_SUCCESS;
    });
}

} // extern "C"

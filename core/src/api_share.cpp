// SPDX-License-Identifier: Apache-2.0
// Buffers shared with other processes and libraries: xfer_buffer_export, xfer_buffer_import,
// xfer_buffer_get_share_info and xfer_set_memory_observer (the descriptors' trip over a socket: export_socket.cpp).
#include <unistd.h>

#include "error.hpp"
#include "export_blob.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

void clear_fds(xfer_export &e) noexcept {
    for (int &fd : e.fds) fd = -1;
    e.fd_count = 0;
}

// Closes the descriptors a backend handed over, when the export fails after it did. Entries
// start at -1 and only those the backend set are closed: a backend that failed wrote none (or
// some), whatever its count says.
struct HandedFds {
    int fds[XFER_EXPORT_MAX_FDS] = {-1, -1, -1, -1};
    std::size_t count = 0;
    bool kept = false;
    ~HandedFds() {
        if (kept) return;
        for (int fd : fds) {
            if (fd >= 0) ::close(fd);
        }
    }
};
static_assert(XFER_EXPORT_MAX_FDS == 4, "HandedFds starts every entry at -1");

} // namespace

extern "C" {

XFER_API xfer_status xfer_buffer_export(xfer_buffer buf, xfer_export *out) {
    constexpr const char *fn = "xfer_buffer_export";
    return guard(fn, [&] {
        if (out == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": out is NULL");
        if (out->struct_size < sizeof(xfer_export)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": out->struct_size is ", out->struct_size,
                  " (set it to sizeof(xfer_export), ", sizeof(xfer_export), " in this xfer.h)");
        }
        auto b = lookup<Buffer>(buf, fn, "buf");
        Context &c = *b->ctx;
        ContextUse use(c, fn);
        ObjectUse buffer_use(*b, fn, "buf");
        const xfer_backend_table &t = c.table();
        if (t.buffer_export == nullptr || t.buffer_import == nullptr) raise_not_supported(c, fn);
        xfer_export e{};
        e.struct_size = sizeof e;
        clear_fds(e);
        HandedFds handed;
        std::size_t payload_bytes = export_blob::payload_capacity();
        handed.count = XFER_EXPORT_MAX_FDS;
        call_backend(*c.plugin, fn, "buffer_export", [&] {
            return t.buffer_export(c.native, b->native, export_blob::payload_of(e), &payload_bytes, handed.fds,
                                   &handed.count);
        });
        if (handed.count > XFER_EXPORT_MAX_FDS || payload_bytes > export_blob::payload_capacity()) {
            raise(XFER_ERROR_BACKEND, fn, ": backend '", c.name(), "' described the buffer with ", handed.count,
                  " descriptors and ", payload_bytes, " bytes, more than an export holds");
        }
        for (std::size_t i = 0; i < handed.count; ++i) e.fds[i] = handed.fds[i];
        e.fd_count = static_cast<std::uint32_t>(handed.count);
        export_blob::seal(e, c.name(), b->bytes, payload_bytes);
        handed.kept = true;
        *out = e;
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_buffer_import(xfer_context ctx, const xfer_export *in, xfer_buffer *out) {
    constexpr const char *fn = "xfer_buffer_import";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (in == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in is NULL");
        if (out == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": out is NULL");
        if (in->struct_size < sizeof(xfer_export)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in->struct_size is ", in->struct_size,
                  " (set it to sizeof(xfer_export), ", sizeof(xfer_export), " in this xfer.h)");
        }
        if (in->fd_count > XFER_EXPORT_MAX_FDS) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in->fd_count is ", in->fd_count, " (at most ",
                  XFER_EXPORT_MAX_FDS, ")");
        }
        for (std::uint32_t i = 0; i < in->fd_count; ++i) {
            if (in->fds[i] < 0) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": in->fds[", i, "] is ", in->fds[i]);
        }
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.buffer_export == nullptr || t.buffer_import == nullptr) raise_not_supported(*context, fn);
        const export_blob::Contents what = export_blob::open(*in, context->name(), fn);
        auto record = std::make_shared<Buffer>();
        record->ctx = context;
        record->bytes = static_cast<std::size_t>(what.buffer_bytes);
        record->imported = true;
        Buffer &b = *record;
        call_backend(*context->plugin, fn, "buffer_import", [&] {
            return t.buffer_import(context->native, what.payload, what.payload_bytes, in->fds, in->fd_count, b.bytes,
                                   &b.native, &b.host_view, &b.device_view);
        });
        const std::uint64_t handle = adopt(record, fn);
        *out = reinterpret_cast<xfer_buffer>(handle);
        tell_buffer(*context, XFER_MEMORY_ALLOCATED, *record);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_buffer_get_share_info(xfer_buffer buf, xfer_share_info *info) {
    constexpr const char *fn = "xfer_buffer_get_share_info";
    return guard(fn, [&] {
        if (info == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": info is NULL");
        if (info->struct_size < sizeof(xfer_share_info)) {
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": info->struct_size is ", info->struct_size,
                  " (set it to sizeof(xfer_share_info), ", sizeof(xfer_share_info), " in this xfer.h)");
        }
        auto b = lookup<Buffer>(buf, fn, "buf");
        Context &c = *b->ctx;
        ContextUse use(c, fn);
        ObjectUse buffer_use(*b, fn, "buf");
        const xfer_backend_table &t = c.table();
        if (t.buffer_share_info == nullptr) raise_not_supported(c, fn);
        xfer_share_info filled{};
        filled.struct_size = sizeof filled;
        call_backend(*c.plugin, fn, "buffer_share_info",
                     [&] { return t.buffer_share_info(c.native, b->native, &filled); });
        filled.struct_size = sizeof filled;
        *info = filled;
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_set_memory_observer(xfer_context ctx, xfer_memory_observer_fn fn_, void *user_data) {
    constexpr const char *fn = "xfer_set_memory_observer";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        ContextUse use(*context, fn);
        context->memory_events.set_observer(fn_, user_data);
        return XFER_SUCCESS;
    });
}

} // extern "C"

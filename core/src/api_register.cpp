// SPDX-License-Identifier: Apache-2.0
// Registered user memory: xfer_register, xfer_unregister, xfer_registration_get_stats.
#include <cstdint>

#include "error.hpp"
#include "objects.hpp"
#include <xfer/xfer.h>

using namespace xfer::core;

namespace {

constexpr unsigned kRegisterFlags = XFER_REGISTER_READ_ONLY;

} // namespace

extern "C" {

XFER_API xfer_status xfer_register(xfer_context ctx, void *ptr, std::size_t bytes, unsigned flags) {
    constexpr const char *fn = "xfer_register";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (ptr == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": ptr is NULL");
        if ((flags & ~kRegisterFlags) != 0u)
            raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": flags ", flags, " has bits that are not XFER_REGISTER_*");
        if (bytes == 0) raise(XFER_ERROR_INVALID_SIZE, fn, ": bytes is 0");
        if (reinterpret_cast<std::uintptr_t>(ptr) > UINTPTR_MAX - bytes)
            raise(XFER_ERROR_INVALID_SIZE, fn, ": ptr + bytes (", bytes, ") overflows the address space");
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.register_memory == nullptr) raise_not_supported(*context, fn);
        RegistrationCall counted(context->stats);
        call_backend(*context->plugin, fn, "register_memory",
                     [&] { return t.register_memory(context->native, ptr, bytes, flags); });
        context->memory_events.registered(ctx, ptr, bytes);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_unregister(xfer_context ctx, void *ptr) {
    constexpr const char *fn = "xfer_unregister";
    return guard(fn, [&] {
        refuse_in_host_function(fn); // it waits for the context's queued work, the caller's included
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (ptr == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": ptr is NULL");
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.unregister_memory == nullptr) raise_not_supported(*context, fn);
        RegistrationCall counted(context->stats);
        context->memory_events.unregistering(ctx, ptr);
        call_backend(*context->plugin, fn, "unregister_memory",
                     [&] { return t.unregister_memory(context->native, ptr); });
        context->memory_events.unregistered(ptr);
        return XFER_SUCCESS;
    });
}

XFER_API xfer_status xfer_registration_get_stats(xfer_context ctx, xfer_registration_stats *stats) {
    constexpr const char *fn = "xfer_registration_get_stats";
    return guard(fn, [&] {
        auto context = lookup<Context>(ctx, fn, "ctx");
        if (stats == nullptr) raise(XFER_ERROR_INVALID_ARGUMENT, fn, ": stats is NULL");
        ContextUse use(*context, fn);
        const xfer_backend_table &t = context->table();
        if (t.registration_stats == nullptr) raise_not_supported(*context, fn);
        // Written only on success (output arguments rule): the backend fills a local copy.
        xfer_registration_stats out{};
        call_backend(*context->plugin, fn, "registration_stats",
                     [&] { return t.registration_stats(context->native, &out); });
        *stats = out;
        return XFER_SUCCESS;
    });
}

} // extern "C"

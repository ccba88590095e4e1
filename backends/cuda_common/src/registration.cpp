// SPDX-License-Identifier: Apache-2.0
#include "registration.hpp"

#include <iterator>

#include <cuda_runtime_api.h>

#include "entries.hpp"
#include "known_memory.hpp"
#include "user_memory/registration_cache.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda {

xfer_status register_in_pieces(char *start, std::size_t bytes, std::size_t piece_bytes, RegisterFn reg,
                               UnregisterFn unreg, void *user, std::vector<Piece> *out) {
    std::vector<Piece> done;
    done.reserve(piece_bytes == 0 ? 1 : bytes / piece_bytes + 1); // no allocation once pinning starts
    const xfer_status whole = reg(user, start, bytes);
    if (whole == XFER_SUCCESS) {
        done.push_back(Piece{start, bytes});
        *out = std::move(done);
        return XFER_SUCCESS;
    }
    if (piece_bytes == 0 || bytes <= piece_bytes) {
        return whole;
    }
    for (std::size_t offset = 0; offset < bytes; offset += piece_bytes) {
        const std::size_t n = bytes - offset < piece_bytes ? bytes - offset : piece_bytes;
        if (const xfer_status st = reg(user, start + offset, n); st != XFER_SUCCESS) {
            for (auto it = done.rbegin(); it != done.rend(); ++it) {
                unreg(user, it->start, it->bytes);
            }
            return st;
        }
        done.push_back(Piece{start + offset, n});
    }
    *out = std::move(done);
    return XFER_SUCCESS;
}

// ----------------------------------------------------------- a context's registrations

namespace {

struct RegisterCall {
    unsigned cuda_flags;
};

xfer_status register_piece(void *user, char *start, std::size_t bytes) {
    const unsigned flags = static_cast<RegisterCall *>(user)->cuda_flags;
    const plugin::HostTimer timer;
    const cudaError_t err = cudaHostRegister(start, bytes, flags);
    if (err == cudaSuccess) {
        plugin::note_registration(false, bytes, timer.ns());
    }
    if (err == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        return fail(XFER_ERROR_INVALID_STATE,
                    "cudaHostRegister(%p, %zu bytes, flags 0x%x): the memory is already page-locked "
                    "(cudaHostAlloc memory, or registered outside xfer) (cudaErrorHostMemoryAlreadyRegistered=%d)",
                    static_cast<void *>(start), bytes, flags, static_cast<int>(err));
    }
    if (err == cudaErrorNotSupported) {
        (void)cudaGetLastError();
        return fail(XFER_ERROR_NOT_SUPPORTED, "cudaHostRegister(%zu bytes, flags 0x%x): not supported here (%s=%d)",
                    bytes, flags, cudaGetErrorName(err), static_cast<int>(err));
    }
    return check(err, "cudaHostRegister(%p, %zu bytes, flags 0x%x)", static_cast<void *>(start), bytes, flags);
}

void unregister_piece(void * /*user*/, char *start, std::size_t /*bytes*/) {
    // Rollback: the failure being reported is the registration's; a failed undo is cleared.
    if (cudaHostUnregister(start) != cudaSuccess) {
        (void)cudaGetLastError();
    }
}

xfer_status device_attribute(cudaDeviceAttr attr, int device, int *value) {
    return check(cudaDeviceGetAttribute(value, attr, device), "cudaDeviceGetAttribute(%d, device %d)",
                 static_cast<int>(attr), device);
}

} // namespace

xfer_status HostRegistrations::add(const Context &ctx, void *ptr, std::size_t bytes, unsigned flags) {
    int supported = 0;
    if (auto st = device_attribute(cudaDevAttrHostRegisterSupported, ctx.device, &supported)) {
        return st;
    }
    if (!supported) {
        return fail(XFER_ERROR_NOT_SUPPORTED,
                    "xfer_register: device %d cannot register host memory "
                    "(cudaDevAttrHostRegisterSupported is 0)",
                    ctx.device);
    }
    unsigned cuda_flags = cudaHostRegisterPortable | cudaHostRegisterMapped;
    if (flags & XFER_REGISTER_READ_ONLY) {
        int read_only = 0;
        if (auto st = device_attribute(cudaDevAttrHostRegisterReadOnlySupported, ctx.device, &read_only)) {
            return st;
        }
        if (read_only) {
            cuda_flags |= cudaHostRegisterReadOnly;
        }
    }
    const auto start = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto next = ranges_.lower_bound(start);
    if ((next != ranges_.end() && next->first < start + bytes) ||
        (next != ranges_.begin() && std::prev(next)->first + std::prev(next)->second.bytes > start)) {
        return fail(XFER_ERROR_INVALID_STATE,
                    "xfer_register(%p, %zu bytes): overlaps a range already registered "
                    "with this context (xfer_unregister it first)",
                    ptr, bytes);
    }
    // The registration cache may hold part of the range: it gives it up, so that what is left
    // page-locked is someone else's.
    (void)ctx.cache->forget(ptr, bytes);
    // Memory page-locked by someone else is named before the driver is asked: its answer
    // (cudaErrorHostMemoryAlreadyRegistered) comes only for the first page.
    const char *last = static_cast<char *>(ptr) + bytes - 1;
    if (classify(ptr) == Memory::pinned_host || classify(last) == Memory::pinned_host) {
        return fail(XFER_ERROR_INVALID_STATE,
                    "xfer_register(%p, %zu bytes): the range is already page-locked "
                    "(cudaHostAlloc memory, or registered outside xfer_register)",
                    ptr, bytes);
    }
    if (classify(ptr) != Memory::pageable) {
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "xfer_register(%p, %zu bytes): %s is not host memory the "
                    "process allocated",
                    ptr, bytes, memory_name(classify(ptr)));
    }
    Range range;
    range.bytes = bytes;
    RegisterCall call{cuda_flags};
    if (auto st = register_in_pieces(static_cast<char *>(ptr), bytes, kRegisterPieceBytes, register_piece,
                                     unregister_piece, &call, &range.pieces)) {
        return st;
    }
    ranges_.emplace(start, std::move(range));
    bytes_ += bytes;
    return XFER_SUCCESS;
}

bool HostRegistrations::holds(const void *ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    return ranges_.count(reinterpret_cast<std::uintptr_t>(ptr)) != 0;
}

xfer_status HostRegistrations::remove(const Context &ctx, void *ptr) {
    Range range;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = ranges_.find(reinterpret_cast<std::uintptr_t>(ptr));
        if (it == ranges_.end()) {
            return fail(XFER_ERROR_INVALID_ARGUMENT,
                        "xfer_unregister(%p): not the start of a range registered "
                        "with this context",
                        ptr);
        }
        range = std::move(it->second);
        bytes_ -= range.bytes;
        ranges_.erase(it);
    }
    // A queued DMA may still read or write the range: unregistering under it would make the
    // driver fall back to (or fault on) pageable memory mid-copy.
    xfer_status st = wait_for_queued_work(ctx);
    for (const Piece &p : range.pieces) {
        const plugin::HostTimer timer;
        st = last_failure(st, check(cudaHostUnregister(p.start), "cudaHostUnregister(%p, %zu bytes)",
                                    static_cast<void *>(p.start), p.bytes));
        plugin::note_registration(true, p.bytes, timer.ns());
    }
    return st;
}

xfer_status HostRegistrations::remove_all() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    xfer_status st = XFER_SUCCESS;
    for (const auto &entry : ranges_) {
        for (const Piece &p : entry.second.pieces) {
            const plugin::HostTimer timer;
            st = last_failure(st, check(cudaHostUnregister(p.start), "cudaHostUnregister(%p, %zu bytes) at close",
                                        static_cast<void *>(p.start), p.bytes));
            plugin::note_registration(true, p.bytes, timer.ns());
        }
    }
    ranges_.clear();
    bytes_ = 0;
    return st;
}

void HostRegistrations::stats(xfer_registration_stats *out) {
    std::lock_guard<std::mutex> lock(mutex_);
    out->registered_ranges = ranges_.size();
    out->registered_bytes = bytes_;
}

xfer_status register_memory(void *ctx, void *ptr, size_t bytes, unsigned flags) {
    return on_device("register_memory", ctx, [&](const Context &c) {
        // Registering changes what the driver says of the range (and unregistering changes it
        // back): a buffer view there is asked about from now on, never answered from memory.
        known_memory::forget_overlapping(ptr, bytes);
        return c.registrations->add(c, ptr, bytes, flags);
    });
}

xfer_status unregister_memory(void *ctx, void *ptr) {
    return on_device("unregister_memory", ctx, [&](const Context &c) {
        // A range the registration cache page-locked on its own is released as well: the
        // application may unlock memory it is about to hand elsewhere without knowing who
        // locked it.
        if (!c.registrations->holds(ptr) && c.cache->holds(ptr)) return c.cache->forget(ptr, 1);
        return c.registrations->remove(c, ptr);
    });
}

xfer_status registration_stats(void *ctx, xfer_registration_stats *stats) {
    return guarded("registration_stats", [&] {
        const Context &c = as_context(ctx);
        *stats = xfer_registration_stats{};
        c.registrations->stats(stats);
        c.cache->stats(stats);
        return XFER_SUCCESS;
    });
}

} // namespace xfer::cuda

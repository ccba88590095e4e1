// SPDX-License-Identifier: Apache-2.0
// A CUDA backend's context: one device, its properties that change behaviour, and the entries
// every CUDA backend shares for probing and opening a device.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <cuda_runtime_api.h>
#include <xfer/xfer_backend.h>

#include "host_copy_hook.hpp"
#include "pointer_memory.hpp"
#include "registration.hpp"

namespace xfer::cuda {

class BatchPacker;

// Properties read once at context_create; backends decide on them (e.g. managed prefetch).
struct DeviceCaps {
    int concurrent_managed_access = 0;
    int can_map_host_memory = 0;
    int managed_memory = 0;
};

// Base of every CUDA backend's context. A backend that needs more state derives from it; the
// plugin ABI's void* always points at this base (convert derived -> Context* -> void*).
struct Context {
    int device = 0;
    DeviceCaps caps;
    virtual ~Context();

    // Streams of this context with queued work that may still write host memory (see
    // HostWriteTracker); mutable because every entry sees the context as const.
    mutable HostWriteTracker host_writes;

    // The backend's own path for copies between pageable host memory and device memory, or
    // nullptr when they go the direct way. Buffer copies and raw copies both ask for it.
    virtual HostCopyHook *host_copy_hook() const noexcept { return nullptr; }

    // Devices (ordinals < 64) whose streams were given peer copies that use this context's
    // memory (peer.cpp); wait_for_queued_work waits for them too. Only ever grows.
    mutable std::atomic<std::uint64_t> peer_devices{0};
    void note_peer_device(int device) const noexcept {
        if (device >= 0 && device < 64) peer_devices.fetch_or(std::uint64_t{1} << device);
    }

    // Releases what the context made beyond the base (the pageable staging engine), with the
    // device current; context_destroy calls it before deleting the context.
    virtual xfer_status close() noexcept { return XFER_SUCCESS; }

    // --- appended for issue 8 (batched small copies, registered user memory) ---
    // Ranges registered with xfer_register (registration.hpp); context_destroy unregisters
    // what is left.
    mutable HostRegistrations registrations;
    // Packs the small entries of xfer_memcpy_batch_async (packed_batch.hpp); made at
    // context_create from the batch parameters every CUDA backend declares; nullptr: off.
    std::unique_ptr<BatchPacker> packer;
    // A backend with an automatic registration cache (pinned) drops the cached ranges that
    // overlap [ptr, ptr + bytes) (before xfer_register takes them) and adds its counters.
    virtual void forget_cached_registrations(const void * /*ptr*/, std::size_t /*bytes*/) const noexcept {}
    virtual void cache_stats(xfer_registration_stats * /*out*/) const noexcept {}
    // Forgets cached registrations of [ptr, ptr + bytes) whose pages were freed and reused or
    // that the range straddles, so that the pointer classifies as what it is now and the driver
    // accepts the copy (every raw copy calls it for its pointers before classifying them).
    virtual void drop_stale_registrations(const void * /*ptr*/, std::size_t /*bytes*/) const noexcept {}
    // A raw copy between host memory and device memory (memcpy.cpp; `to`, `from`: what the
    // pointers were classified as there), offered to the backend's
    // registration cache first: *taken true when it queued the copy itself.
    virtual xfer_status cache_pageable_copy(void * /*dst*/, const void * /*src*/, std::size_t /*bytes*/,
                                            Memory /*to*/, Memory /*from*/, cudaStream_t /*s*/,
                                            bool *taken) const noexcept {
        *taken = false;
        return XFER_SUCCESS;
    }
    Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
};

inline Context &as_context(void *ctx) { return *static_cast<Context *>(ctx); }

// The runtime's current device is per host thread and calls may arrive on any thread, so every
// entry binds the context's device first (cheap: no driver round trip once initialised).
xfer_status activate(const Context &ctx) noexcept;

// What a backend needs of every device it opens, beyond being a CUDA device.
enum class Requirement { none, managed_memory, map_host_memory };

// probe entry body: counts CUDA devices; NO_DEVICE with the reason when there is no driver or
// no device (e.g. "no CUDA driver: libcuda.so.1 could not be loaded (...)"); BACKEND_UNAVAILABLE
// when no device meets `req`.
xfer_status probe_devices(Requirement req, int *device_count) noexcept;

// Binds `ctx` to `device`: cudaSetDevice + cudaFree(0) to create the primary context now (so
// the first copy does not pay for it), reads DeviceCaps, checks `req` (BACKEND_UNAVAILABLE
// naming the device and the missing attribute if it is not met).
xfer_status open_device(int device, Requirement req, Context &ctx) noexcept;

// open_device on `ctx`, then hands it to the core through `out` (ownership passes to the
// context_destroy entry). `ctx` may be a backend's type derived from Context.
xfer_status publish_context(int device, Requirement req, std::unique_ptr<Context> ctx, void **out) noexcept;

// buffer_free must never release memory that queued work still uses. The CUDA backends wait
// for the whole device to go idle (cudaDeviceSynchronize) before releasing: this also covers
// kernels the application queued on its own streams using the buffer, and pageable host memory,
// whose free() the driver would not order. Freeing is not on the copy path, so the stall is
// the price of never having a use-after-free. Devices whose streams ran peer copies on this
// context's memory (Context::peer_devices) are waited for as well.
xfer_status wait_for_queued_work(const Context &ctx) noexcept;

// context_destroy entry shared by all CUDA backends (the core has already released every
// stream, event and buffer of the context).
xfer_status context_destroy(void *ctx);

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
// A CUDA backend's context and everything that happens on its device:
//  - how a CUDA call reports failure (check: cudaError_t -> xfer_status, a message naming the
//    call; a device poisoned by a sticky fault refuses further work);
//  - what memory a raw pointer is (classify) and whether a copy kind fits it;
//  - the Context: one device, its properties, the host writes its streams may still do, the
//    backend's hook for copies touching pageable memory, and its life (probe, open, close);
//  - copies between pageable host memory and device memory in stream order (copy_pageable);
//  - the event of a reusable slot (retire_slot_event).
// Failure reporting itself (fail, last_failure, the core's services) is xfer_plugin/errors.hpp,
// shared with the host backend; it is re-exported here for the CUDA code.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <cuda_runtime_api.h>

#include <xfer/xfer_backend.h>
#include <xfer_plugin/errors.hpp>

namespace xfer::cuda {

using plugin::fail;
using plugin::last_failure;
using plugin::set_core_services;

// ------------------------------------------------------------------ CUDA failures

// cudaErrorMemoryAllocation -> OUT_OF_MEMORY; NoDevice, InsufficientDriver, InvalidDevice,
// DevicesUnavailable -> NO_DEVICE; NotReady -> NOT_READY; anything else -> BACKEND.
xfer_status status_from_cuda(cudaError_t err) noexcept;

// check() for a call that failed (err != cudaSuccess): reports, e.g.
//   "cudaMalloc(268435456 bytes): out of memory (cudaErrorMemoryAllocation=2)"
// where the part before the colon is `call_format` formatted with the arguments, clears the
// runtime's per-thread last error so it does not leak into the application's
// cudaGetLastError(), and returns the mapped status.
xfer_status check_failed(cudaError_t err, const char *call_format, ...) noexcept
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// XFER_SUCCESS when err is cudaSuccess, else check_failed(err, call_format, args...). Inline,
// so that the success path costs a comparison: a variadic function's prologue alone would add
// tens of instructions to every small copy (the per-call overhead). The message is built only
// on failure.
template <class... Args>
inline xfer_status check(cudaError_t err, const char *call_format, Args... args) noexcept {
    return err == cudaSuccess ? XFER_SUCCESS : check_failed(err, call_format, args...);
}

// check() for the answer of a query (cudaStreamQuery, cudaEventQuery, cudaEventElapsedTime):
// cudaErrorNotReady is an answer there, not a failure, so it becomes NOT_READY with no message
// and is kept out of the application's cudaGetLastError().
xfer_status check_query(cudaError_t err, const char *call) noexcept;

// Sticky errors (a kernel that faulted, a device-side assert, ...) leave the CUDA context of
// the device unusable for the rest of the process. check() records the first one per device;
// from then on refuse_if_poisoned() answers XFER_ERROR_BACKEND_UNAVAILABLE naming that fault,
// without calling CUDA (a call could hang or report the old fault as a new one). Other devices,
// and other backends, are unaffected.
bool is_sticky(cudaError_t err) noexcept;
xfer_status refuse_if_poisoned(int device) noexcept;

// ------------------------------------------------------------------ pointer memory

// What memory a raw pointer points at, as far as a copy is concerned.
enum class Memory {
    pageable,    // host memory CUDA does not know (malloc, new, stack): cudaMemoryTypeUnregistered
    pinned_host, // page-locked host memory (cudaHostAlloc/cudaHostRegister), mapped on UVA systems
    device,      // cudaMalloc memory
    managed,     // cudaMallocManaged memory
};

Memory classify(const void *ptr) noexcept; // cudaPointerGetAttributes
// Host memory, page-locked or not (what a copy's host side may be).
constexpr bool is_host_memory(Memory m) noexcept { return m == Memory::pageable || m == Memory::pinned_host; }
const char *memory_name(Memory m) noexcept;

// nullptr when a copy of `kind` may take `dst` and `src`; otherwise which side does not fit,
// e.g. "the destination is pageable host memory, which the device cannot address".
// Device-side operands may be device, managed or mapped (pinned) host memory: those are the
// device views of the CUDA backends. Host-side operands may be anything but cudaMalloc memory.
const char *kind_mismatch(xfer_copy_kind kind, Memory dst, Memory src) noexcept;

// ------------------------------------------------------- copies touching pageable memory
//
// The driver reads pageable memory (malloc, new, a NumPy array) when cudaMemcpyAsync is
// *called*, not when the stream reaches the copy, so stream order needs care; and it moves it
// slowly (one thread, its own small staging buffers). A backend may take these copies over (the
// pageable backend stages them through its engine); otherwise they go straight to the driver.

// A backend's own path for copies between pageable host memory and device memory.
class HostCopyHook {
  public:
    virtual ~HostCopyHook() = default;

    // Queues the copy of `bytes` between `host` (pageable) and `device` (cudaMalloc memory) on
    // `stream`, in stream order, tagged with `reason`, and sets *taken; or leaves *taken false
    // (nothing queued: no room, or the hook could not start) so that the caller copies the
    // direct way. Which copies come here is the copy policy's choice (the context's cache).
    // `page_locking`: the host range is being page-locked (the registration cache's background
    // registration), so the copies after this one are DMAs from it; a copy to the device then
    // leaves none of the range's lines in the cores that read it (a DMA that reads lines held in
    // a core's caches fetches each from that core, on every later copy too: reads do not take
    // them away; measured: docs/performance.md, user memory). The context's device is current.
    virtual xfer_status copy(void *device, void *host, std::size_t bytes, xfer_direction dir, cudaStream_t stream,
                             xfer_path_reason reason, bool page_locking, bool *taken) noexcept = 0;

    // A failure of work this hook queued on `stream` that nobody has been told of yet (reported
    // through fail() and forgotten), or XFER_SUCCESS. Called after the stream was waited for.
    virtual xfer_status take_stream_error(cudaStream_t /*stream*/) noexcept { return XFER_SUCCESS; }

    // `stream` (nullptr: the whole device) failed: gives up what the hook queued there and
    // returns once none of its host threads touches the user's memory, because the caller is
    // about to say that the work is over (a failed synchronisation, a refused call).
    virtual void abandon(cudaStream_t /*stream*/) noexcept {}

    // `stream` was waited for and is about to be destroyed: the hook forgets it.
    virtual void stream_destroyed(cudaStream_t /*stream*/) noexcept {}

    // Waits for everything the hook queued and releases what it holds; at context_destroy.
    virtual xfer_status close() noexcept { return XFER_SUCCESS; }
};

// Which streams have work queued through xfer that may still *write* host memory (host
// functions, staged copies to the host). A direct copy from pageable memory reads it at call
// time, so only on such a stream must it wait first: every other direct copy pays nothing.
// Thread-safe. One atomic load on the fast path (no stream of the context has such work).
class HostWriteTracker {
  public:
    void begin(cudaStream_t stream);
    void end(cudaStream_t stream) noexcept;
    // Inline: every direct copy from pageable memory asks, and nearly always nothing is pending.
    bool pending(cudaStream_t stream) const noexcept {
        return total_.load(std::memory_order_acquire) != 0 && pending_on(stream);
    }

  private:
    bool pending_on(cudaStream_t stream) const noexcept;

    std::atomic<int> total_{0};
    mutable std::mutex mutex_;
    std::unordered_map<cudaStream_t, int> per_stream_;
};

// ------------------------------------------------------------------------- context

class BatchPacker;       // packed small copies of a batch (src/batch.hpp)
class HostPool;          // the context's host threads (src/host_pool.hpp)
class HostRegistrations; // ranges registered with xfer_register (src/registration.hpp)
namespace user_memory {
class RegistrationCache; // the per-copy choice and the ranges it page-locked (src/user_memory)
struct Calibration;      // this machine's copy costs (src/user_memory/calibration_file.hpp)
} // namespace user_memory

// Properties read once at context_create; backends decide on them (e.g. managed prefetch).
struct DeviceCaps {
    int concurrent_managed_access = 0;
    int can_map_host_memory = 0;
    int managed_memory = 0;
};

// How copies of user memory go on a backend while no calibration of the machine is known (with
// one, the copy policy decides the same way on every backend).
enum class UserMemoryRule {
    unregistered,          // the driver's copy, or the staging engine from its crossover up
    register_on_first_use, // page-lock every range from registration_min up (pinned)
};

// The values a context derived (a backend's `derived` declarations): each as text, and whether
// the calibration gave it. Set at context_create, read by xfer_context_get_setting.
struct DerivedValue {
    std::string value;
    bool calibrated = false;
};

// Base of every CUDA backend's context. A backend that needs more state derives from it; the
// plugin ABI's void* always points at this base (convert derived -> Context* -> void*).
struct Context {
    int device = 0;
    DeviceCaps caps;
    // The device's primary CUcontext (a CUcontext; void* keeps cuda.h out of this header),
    // retained when the device was first opened: activate() pushes it only when another context,
    // or none, is current (binding on every call would cost a driver call per small copy).
    // nullptr without the driver's context calls: activate() then calls cudaSetDevice.
    void *primary_context = nullptr;

    // Streams of this context with queued work that may still write host memory (see
    // HostWriteTracker); mutable because every entry sees the context as const.
    mutable HostWriteTracker host_writes;

    // Devices (ordinals < 64) whose streams were given peer copies that use this context's
    // memory; wait_for_queued_work waits for them too. Only ever grows.
    mutable std::atomic<std::uint64_t> peer_devices{0};
    void note_peer_device(int device) const noexcept {
        if (device >= 0 && device < 64) peer_devices.fetch_or(std::uint64_t{1} << device);
    }

    // Ranges registered with xfer_register; close_context unregisters what is left.
    const std::unique_ptr<HostRegistrations> registrations;
    // The most host threads xfer starts for this context (the host_threads parameter,
    // resolved), and their one pool, shared by every engine that copies on the host (the
    // staging engine's workers, packed batches' helpers, the managed backend's staged copies);
    // made at context_create, started at its first use, joined at close.
    std::size_t host_threads = 1;
    std::unique_ptr<HostPool> host_pool;
    // Runs `task` on one of the pool's threads; false (not run) when no thread could be started.
    bool run_on_host_thread(std::function<void()> task) const noexcept;
    // Packs the small entries of xfer_memcpy_batch_async; made at context_create from the
    // batch values every CUDA backend derives; nullptr: off.
    std::unique_ptr<BatchPacker> packer;
    // The calibration the context opened with (nullptr: none; the declared defaults decide).
    // Declared before the cache, whose copy policy reads it: it outlives the cache.
    std::shared_ptr<const user_memory::Calibration> calibration;
    // Copies of pageable (user) memory: which path each takes, and the ranges page-locked for
    // them (made at context_create, after the calibration; never null once the context is open).
    std::unique_ptr<user_memory::RegistrationCache> cache;
    // What `derived` values the context uses, by name.
    std::map<std::string, DerivedValue> derived_values;

    Context();
    virtual ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // --- what a backend may override ---

    // The backend's own path for copies between pageable host memory and device memory, or
    // nullptr when they go the direct way. Buffer copies and raw copies both ask for it.
    virtual HostCopyHook *host_copy_hook() const noexcept { return nullptr; }
    // Releases what the context made beyond the base (the pageable staging engine), with the
    // device current; close_context calls it before deleting the context.
    virtual xfer_status close() noexcept { return XFER_SUCCESS; }
};

// Copies `bytes` from `src` to `dst` on the host, shared in blocks among the calling thread and
// the context's host threads (the caller copies alone when none is free): for a host copy that a
// stream waits for, such as the managed backend's staged copy to the host.
void copy_on_host_threads(const Context &ctx, void *dst, const void *src, std::size_t bytes) noexcept;

// After a failed wait for `stream` (nullptr: the device): the context's HostCopyHook gives up
// what it queued there (the whole device when the error is sticky), so that no host thread of
// xfer's touches the user's memory once the failure is reported.
void abandon_host_work(const Context &ctx, cudaError_t err, cudaStream_t stream) noexcept;

inline Context &as_context(void *ctx) { return *static_cast<Context *>(ctx); }

// What a backend needs of every device it opens, beyond being a CUDA device.
enum class Requirement { none, managed_memory, map_host_memory };

// The probe entry's body: counts CUDA devices; NO_DEVICE with the reason when there is no
// driver or no device (e.g. "no CUDA driver: libcuda.so.1 could not be loaded (...)");
// BACKEND_UNAVAILABLE when no device meets `req`.
xfer_status probe_devices(Requirement req, int *device_count) noexcept;

// Binds `ctx` to `device`: cudaSetDevice + cudaFree(0) to create the primary context now (so
// the first copy does not pay for it), reads DeviceCaps, checks `req` (BACKEND_UNAVAILABLE
// naming the device and the missing attribute if it is not met).
xfer_status open_device(int device, Requirement req, Context &ctx) noexcept;

// open_device on `ctx`, then hands it to the core through `out` (ownership passes to the
// context_destroy entry). `ctx` may be a backend's type derived from Context.
xfer_status publish_context(int device, Requirement req, std::unique_ptr<Context> ctx, void **out) noexcept;

// The calling thread's CUDA binding (its current context) as an entry found it, put back when
// the entry returns: every xfer call leaves the thread's current device and context as it found
// them (xfer.h). Binding a context's device pushes its primary context on the thread's context
// stack (cuCtxPushCurrent), which leaves the runtime's current-device setting alone; restore()
// pops what was pushed and makes the caller's context current again. Nothing is pushed, and
// nothing restored, when the caller's current context already is the device's primary context
// (the common case: the cost is the one read of the current context activate makes anyway).
class CallerBinding {
  public:
    CallerBinding() = default;
    ~CallerBinding() { (void)restore(XFER_SUCCESS); } // the safety net when an entry throws
    CallerBinding(const CallerBinding &) = delete;
    CallerBinding &operator=(const CallerBinding &) = delete;

    // Makes `primary` (a CUcontext) current until restore().
    xfer_status push(void *primary) noexcept;
    // Before a call that replaces the thread's current context (cudaSetDevice): remembers the
    // caller's, so that restore() puts it back.
    void note_replaced() noexcept;
    // Puts the caller's binding back; returns `status`, or the failure of doing so.
    xfer_status restore(xfer_status status) noexcept;

  private:
    void remember() noexcept;
    void *caller_ = nullptr; // the caller's current CUcontext (nullptr: none)
    bool changed_ = false;
    int pushed_ = 0;
};

// Calls may arrive on any thread, so every entry binds the context's device first (cheap: one
// read of the thread's current context when it is bound already), through the entry's binding.
xfer_status activate(const Context &ctx, CallerBinding &binding) noexcept;

// buffer_free must never release memory that queued work still uses. The CUDA backends wait
// for the whole device to go idle (cudaDeviceSynchronize) before releasing: this also covers
// kernels the application queued on its own streams using the buffer, and pageable host memory,
// whose free() the driver would not order. Freeing is not on the copy path, so the stall is
// the price of never having a use-after-free. Devices whose streams ran peer copies on this
// context's memory (Context::peer_devices) are waited for as well. Requires the context's device
// bound (activate) and leaves it bound.
xfer_status wait_for_queued_work(const Context &ctx) noexcept;

// The context_destroy entry's body (the core has already released every stream, event and
// buffer of the context): binds the device, closes the backend's part (Context::close), the
// batch packer and the registrations, and deletes the context whatever fails. No
// cudaDeviceReset: the primary context is shared with the application and other contexts.
xfer_status close_context(std::unique_ptr<Context> ctx) noexcept;

// The path of a copy between two memories that the copy engine (or the driver) moves as they
// are: device-device, managed, page-locked host memory, pageable memory (the driver's copy).
xfer_copy_path path_of(Memory to, Memory from) noexcept;

// copy_pageable's driver part, with no hook and no path taken (the caller took it): a piece of
// pageable memory next to a registration made elsewhere (XFER_REASON_SPLIT).
xfer_status copy_pageable_direct(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                                 cudaStream_t stream, const char *what) noexcept;
// A copy between pageable `host` and device memory `device` in stream order, on the path the
// context's copy policy chooses (src/user_memory/copy_policy.hpp): a range the registration
// cache holds (or page-locks now) as DMA, the staging engine (the hook), or cudaMemcpyAsync,
// after waiting for the stream only when earlier work on it may still write host memory
// (to-device) — the driver's to-host copy into pageable memory is itself stream ordered.
// `what` names the operands in a failure message (e.g. "pageable").
xfer_status copy_pageable(const Context &ctx, void *device, void *host, std::size_t bytes, xfer_direction dir,
                          cudaStream_t stream, const char *what) noexcept;

// Graph capture (xfer.h: a copy is captured correctly or refused before the stream is touched).
// *capture: `stream` is capturing a graph (cuStreamIsCapturing, a cheap driver query; never a
// call that would end or invalidate the capture).
xfer_status capturing(cudaStream_t stream, bool *capture) noexcept;
// XFER_ERROR_NOT_SUPPORTED (reported: the copy of `bytes` bytes of `what`, and `why` it cannot
// be captured) while `stream` captures a graph; XFER_SUCCESS otherwise.
xfer_status refuse_while_capturing(cudaStream_t stream, std::size_t bytes, const char *what, const char *why) noexcept;
// The same for a copy of pageable host memory: the driver's pageable copy invalidates the
// application's capture, and a staged, gathered or newly registered copy moves its bytes at
// call time or on host threads, never at replay. Asked before anything else a pageable copy
// does (the registration cache, the staging engine).
xfer_status refuse_pageable_while_capturing(cudaStream_t stream, std::size_t bytes, const char *what) noexcept;

// Waits for `stream` (cudaStreamSynchronize) before a copy that would otherwise overtake
// earlier work writing the host memory it reads.
xfer_status wait_before_pageable_copy(cudaStream_t stream) noexcept;

// ------------------------------------------------------------------- slot events

// The event of a reusable slot (packed batches, managed to-host): recorded after the slot's
// last queued use, waited for on the GPU by its next user, and retired when the slot is freed.
// Waits for the work recorded on *done (cudaEventSynchronize), destroys the event and sets it
// to nullptr; nothing for nullptr. `what` names the slot in a failure message. Reports the last
// failure.
xfer_status retire_slot_event(cudaEvent_t *done, const char *what) noexcept;

} // namespace xfer::cuda

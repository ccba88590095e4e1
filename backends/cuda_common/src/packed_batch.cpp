// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "batch.hpp"
#include "host_copy_team.hpp"
#include "host_pool.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/params.hpp>

namespace xfer::cuda {

namespace {
// One helper is woken per this many bytes of host copies: below it, waking a helper costs more
// than the copy it could take over (a wake-up takes tens of microseconds).
constexpr std::size_t kMinThreadBytes = std::size_t{256} << 10;

// Help texts that name constants of the packer are built from them.
static_assert(kMinThreadBytes % 1024 == 0, "batch_host_threads' help names it in KiB");
constexpr auto kStagingHelp =
    plugin::join("bytes of each of the ", plugin::decimal<BatchPacker::kSlots>().text,
                 " staging slots of packed batches (page-locked host memory and device memory each, made at the "
                 "context's first packed batch); a larger batch is packed in several groups");
constexpr auto kHostThreadsHelp =
    plugin::join("threads that gather or scatter the pageable host side of one packed group (the calling thread, or "
                 "CUDA's callback thread where stream order needs it, plus helpers from the context's host threads, "
                 "one per ",
                 plugin::decimal<(kMinThreadBytes >> 10)>().text, " KiB of the group at most); 1: that thread alone");
} // namespace

constexpr xfer_backend_param kBatchDerived[] = {
    {"batch_pack_max", "size", "32768",
     "entries of xfer_memcpy_batch_async between host and device memory up to this many bytes are packed: one "
     "DMA and one gather/scatter kernel per group instead of one copy-engine operation each (a fixed cost each, "
     "whatever its size); "
     "larger entries go to the copy engine. 0 turns packing off. Public reports put the crossover near 28 KiB"},
    {"batch_staging", "size", "8388608", kStagingHelp.text},
    {"batch_host_threads", "int", "8", kHostThreadsHelp.text},
};
const std::size_t kBatchDerivedCount = sizeof kBatchDerived / sizeof kBatchDerived[0];
static_assert(plugin::declared_defaults_are_decimal(kBatchDerived), "param_u64 parses declared defaults as decimals");

xfer_status read_batch_params(const char *backend, const xfer_backend_param_value *values, std::size_t count,
                              std::size_t host_threads, Context &ctx) noexcept {
    const auto read = [&](const char *name, std::uint64_t min, std::uint64_t max, std::uint64_t *out) {
        xfer_status st =
            plugin::param_u64(backend, kBatchDerived, kBatchDerivedCount, values, count, name, min, max, out);
        if (st == XFER_SUCCESS) ctx.derived_values[name] = DerivedValue{std::to_string(*out), false};
        return st;
    };
    std::uint64_t slot = 0;
    std::uint64_t max_entry = 0;
    std::uint64_t threads = 0;
    // A slot holds at least a page; at most 1 GiB (two of each kind are pinned / allocated).
    if (auto st = read("batch_staging", 4096, 1ull << 30, &slot)) {
        return st;
    }
    // An entry must fit an empty slot beside its descriptor: a quarter of a slot at most.
    if (auto st = read("batch_pack_max", 0, slot / 4, &max_entry)) {
        return st;
    }
    if (auto st = read("batch_host_threads", 1, 64, &threads)) {
        return st;
    }
    // One limit for every host thread xfer starts: host_threads.
    threads = std::min<std::uint64_t>(threads, host_threads);
    ctx.derived_values["batch_host_threads"] = DerivedValue{std::to_string(threads), false};
    if (max_entry > 0) {
        ctx.packer = std::make_unique<BatchPacker>(static_cast<std::size_t>(max_entry), static_cast<std::size_t>(slot),
                                                   static_cast<std::size_t>(threads), ctx.host_pool.get());
    }
    return XFER_SUCCESS;
}

namespace {

// What the host functions of one group need; the caller's arrays are gone by the time they run.
struct HostWork {
    unsigned char *slot = nullptr;
    std::vector<PackedEntry> descriptors;
    std::vector<HostPiece> pieces; // staged routes only
    std::size_t data_bytes = 0;
    std::size_t threads = 1;
    boost::asio::thread_pool *helpers = nullptr; // the packer's, or none (threads 1, or not started)
    bool scatter_after = false;                  // staged_to_host: a second host function finishes
    // staged_to_host: told when the scatter has written the user's memory (it counts as queued
    // work that writes host memory until then).
    HostWriteTracker *host_writes = nullptr;
    cudaStream_t stream = nullptr;
};

// Helper threads worth waking for `bytes` of host copies (kMinThreadBytes each).
std::size_t helpers_for(std::size_t bytes, std::size_t threads) noexcept {
    return std::min(threads - 1, bytes / kMinThreadBytes);
}

// Copies a group's pieces (gather or scatter) with `team` (the batch's, awake already), or with a
// team of its own woken now.
void copy_pieces(const HostWork &w, bool gather, HostCopyTeam *team = nullptr) noexcept {
    if (team != nullptr) {
        team->copy(w.pieces.data(), w.pieces.size(), w.slot, gather);
        return;
    }
    HostCopyTeam own(w.helpers, w.helpers == nullptr ? 0 : helpers_for(w.data_bytes, w.threads));
    own.copy(w.pieces.data(), w.pieces.size(), w.slot, gather);
}

// Host function before the DMA: descriptors in, sources gathered (staged_to_device).
void CUDART_CB prepare(void *user) {
    auto *w = static_cast<HostWork *>(user);
    std::memcpy(w->slot, w->descriptors.data(), w->descriptors.size() * sizeof(PackedEntry));
    if (!w->scatter_after) {
        copy_pieces(*w, true);
        delete w;
    }
}

// Host function after the DMA back (staged_to_host): destinations written from the slot.
void CUDART_CB scatter(void *user) {
    auto *w = static_cast<HostWork *>(user);
    copy_pieces(*w, false);
    w->host_writes->end(w->stream);
    delete w;
}

// The second half of a staged_to_host group whose kernel is queued: the DMA back into the
// page-locked slot, the scatter host function (which owns `work` from then on and deletes it),
// the slot's event. `prepare_queued`: a prepare host function holding `work` is queued too, so
// on a failure `work` is left to it rather than deleted under it.
xfer_status queue_scatter(unsigned char *slot_host, unsigned char *slot_device, cudaEvent_t slot_done, const Group &g,
                          std::size_t desc, std::unique_ptr<HostWork> work, bool prepare_queued, cudaStream_t stream,
                          HostWriteTracker &host_writes) {
    auto keep_if_queued = [&] {
        if (prepare_queued) {
            (void)work.release();
        }
    };
    if (auto st =
            check(cudaMemcpyAsync(slot_host + desc, slot_device + desc, g.data_bytes, cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpyAsync(packed batch: %zu bytes to the host, %zu entries)", g.data_bytes, g.count)) {
        keep_if_queued();
        return st;
    }
    // Until the scatter has run, direct copies from pageable memory on this stream wait first
    // (copy_pageable), and later batches gather in stream order (BatchPacker::queue).
    work->host_writes = &host_writes;
    work->stream = stream;
    host_writes.begin(stream);
    if (auto st = check(cudaLaunchHostFunc(stream, scatter, work.get()), "cudaLaunchHostFunc(packed batch scatter)")) {
        host_writes.end(stream);
        keep_if_queued();
        return st;
    }
    work.release(); // the scatter deletes it
    return check(cudaEventRecord(slot_done, stream), "cudaEventRecord(packed batch slot)");
}

std::uint64_t address(const void *p) { return reinterpret_cast<std::uint64_t>(p); }

} // namespace

BatchPacker::BatchPacker(std::size_t max_entry, std::size_t slot_bytes, std::size_t host_threads,
                         HostPool *pool) noexcept
    : max_entry_(max_entry), slot_bytes_(slot_bytes), host_threads_(host_threads), pool_(pool) {}

BatchPacker::~BatchPacker() { (void)close(); }

bool BatchPacker::allocate() noexcept {
    int same_address = 0;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&same_address, cudaDevAttrCanUseHostPointerForRegisteredMem, device) == cudaSuccess) {
        mapped_host_ = same_address != 0;
    }
    for (Slot &s : slots_) {
        if (cudaHostAlloc(reinterpret_cast<void **>(&s.host), slot_bytes_, cudaHostAllocDefault) != cudaSuccess ||
            cudaMalloc(reinterpret_cast<void **>(&s.device), slot_bytes_) != cudaSuccess ||
            cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)close();
            return false;
        }
    }
    return true;
}

boost::asio::thread_pool *BatchPacker::helpers() noexcept {
    // No helpers (host_threads 1, or no pool): the calling or callback thread copies alone.
    return host_threads_ > 1 && pool_ != nullptr ? pool_->get() : nullptr;
}

PackConfig BatchPacker::config() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!set_up_) {
        set_up_ = true;
        usable_ = allocate();
    }
    PackConfig c;
    c.max_entry = usable_ ? max_entry_ : 0;
    c.slot_bytes = slot_bytes_;
    c.mapped_host = mapped_host_;
    return c;
}

std::unique_ptr<HostCopyTeam> BatchPacker::start_team(std::size_t gather_bytes) noexcept {
    const std::size_t wanted = helpers_for(gather_bytes, host_threads_);
    if (wanted == 0) {
        return nullptr;
    }
    try {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::make_unique<HostCopyTeam>(helpers(), wanted);
    } catch (...) {
        return nullptr; // each group gathers with a team of its own
    }
}

xfer_status BatchPacker::queue(const BatchPlan &plan, void *const *dsts, const void *const *srcs,
                               const std::size_t *sizes, cudaStream_t stream, HostWriteTracker &host_writes,
                               HostCopyTeam *team) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool gather_now = !host_writes.pending(stream);
    for (const Group &g : plan.groups) {
        if (auto st = queue_group(g, plan, dsts, srcs, sizes, stream, gather_now, host_writes, team)) {
            return st;
        }
    }
    return XFER_SUCCESS;
}

xfer_status BatchPacker::queue_group(const Group &g, const BatchPlan &plan, void *const *dsts, const void *const *srcs,
                                     const std::size_t *sizes, cudaStream_t stream, bool gather_now,
                                     HostWriteTracker &host_writes, HostCopyTeam *team) {
    Slot &slot = slots_[next_];
    next_ = (next_ + 1) % kSlots;
    const std::size_t desc = descriptor_bytes(g.count);
    const bool to_device = g.route == Route::staged_to_device || g.route == Route::mapped_to_device;
    const bool staged = g.route == Route::staged_to_device || g.route == Route::staged_to_host;

    auto work = std::make_unique<HostWork>();
    work->slot = slot.host;
    work->scatter_after = g.route == Route::staged_to_host;
    work->data_bytes = g.data_bytes;
    work->threads = host_threads_;
    work->helpers = staged ? helpers() : nullptr;
    work->descriptors.reserve(g.count);
    if (staged) {
        work->pieces.reserve(g.count);
    }
    for (std::size_t k = g.first; k < g.first + g.count; ++k) {
        const Placement &p = plan.placed[k];
        const std::size_t i = p.index;
        const std::uint64_t staging = address(slot.device + desc + p.offset);
        if (!staged) {
            work->descriptors.push_back(PackedEntry{address(dsts[i]), address(srcs[i]), sizes[i]});
        } else if (to_device) {
            work->descriptors.push_back(PackedEntry{address(dsts[i]), staging, sizes[i]});
            work->pieces.push_back(
                HostPiece{static_cast<unsigned char *>(const_cast<void *>(srcs[i])), desc + p.offset, sizes[i]});
        } else {
            work->descriptors.push_back(PackedEntry{staging, address(srcs[i]), sizes[i]});
            work->pieces.push_back(HostPiece{static_cast<unsigned char *>(dsts[i]), desc + p.offset, sizes[i]});
        }
    }
    // A group needs a host function only for what must happen in stream order: the gather of
    // pageable sources while earlier work on the stream may still write them, the scatter into
    // pageable destinations, and anything at all while its slot is still in use (header).
    bool free = false;
    if (g.route != Route::staged_to_device || gather_now) {
        if (auto st = wait_for_slot(slot, &free)) {
            return st;
        }
    }
    if (free) {
        std::memcpy(slot.host, work->descriptors.data(), work->descriptors.size() * sizeof(PackedEntry));
        if (g.route == Route::staged_to_device) {
            copy_pieces(*work, true, team);
        }
        if (g.route != Route::staged_to_host) {
            return queue_device_side(slot, g, desc, stream);
        }
        if (auto st = queue_upload_and_kernel(slot, g, desc, stream)) {
            return st;
        }
        return queue_scatter(slot.host, slot.device, slot.done, g, desc, std::move(work), false, stream, host_writes);
    }
    // The slot's previous group (on any stream) must be done with it: waited for on the GPU.
    if (auto st = check(cudaStreamWaitEvent(stream, slot.done, 0), "cudaStreamWaitEvent(packed batch slot)")) {
        return st;
    }
    HostWork *raw = work.get();
    if (auto st =
            check(cudaLaunchHostFunc(stream, prepare, raw), "cudaLaunchHostFunc(packed batch: %zu entries)", g.count)) {
        return st;
    }
    // From here the host functions own `work` (a failure below leaks it rather than risk a
    // host function running on freed memory).
    work.release();
    if (g.route != Route::staged_to_host) {
        return queue_device_side(slot, g, desc, stream);
    }
    if (auto st = queue_upload_and_kernel(slot, g, desc, stream)) {
        return st;
    }
    return queue_scatter(slot.host, slot.device, slot.done, g, desc, std::unique_ptr<HostWork>(raw), true, stream,
                         host_writes);
}

xfer_status BatchPacker::queue_upload_and_kernel(const Slot &slot, const Group &g, std::size_t desc,
                                                 cudaStream_t stream) noexcept {
    const std::size_t up = desc + (g.route == Route::staged_to_device ? g.data_bytes : 0);
    if (auto st = check(cudaMemcpyAsync(slot.device, slot.host, up, cudaMemcpyHostToDevice, stream),
                        "cudaMemcpyAsync(packed batch: %zu bytes to the device, %zu entries)", up, g.count)) {
        return st;
    }
    return launch_copy_entries(reinterpret_cast<const PackedEntry *>(slot.device), g.count, stream);
}

xfer_status BatchPacker::queue_device_side(const Slot &slot, const Group &g, std::size_t desc,
                                           cudaStream_t stream) noexcept {
    if (auto st = queue_upload_and_kernel(slot, g, desc, stream)) {
        return st;
    }
    return check(cudaEventRecord(slot.done, stream), "cudaEventRecord(packed batch slot)");
}

xfer_status BatchPacker::wait_for_slot(const Slot &slot, bool *free) noexcept {
    const auto until = std::chrono::steady_clock::now() + kSlotWait;
    for (;;) {
        const cudaError_t err = cudaEventQuery(slot.done);
        if (err == cudaSuccess) {
            *free = true;
            return XFER_SUCCESS;
        }
        if (err != cudaErrorNotReady) {
            return check(err, "cudaEventQuery(packed batch slot)");
        }
        (void)cudaGetLastError(); // cudaErrorNotReady is not an error to keep
        if (std::chrono::steady_clock::now() >= until) {
            *free = false;
            return XFER_SUCCESS;
        }
        std::this_thread::yield();
    }
}

xfer_status BatchPacker::close() noexcept {
    xfer_status st = XFER_SUCCESS;
    for (Slot &s : slots_) {
        st = last_failure(st, retire_slot_event(&s.done, "packed batch slot"));
        if (s.device != nullptr) {
            st = last_failure(st, check(cudaFree(s.device), "cudaFree(packed batch slot)"));
        }
        if (s.host != nullptr) {
            st = last_failure(st, check(cudaFreeHost(s.host), "cudaFreeHost(packed batch slot)"));
        }
        s = Slot{};
    }
    // The helpers are the context's pool's: joined at context close, after every engine stopped.
    return st;
}

} // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "managed_to_host.hpp"

#include <cstdint>
#include <cstring>
#include <new>

#include "xfer_cuda/context.hpp"

namespace xfer::cuda::managed {
namespace {

constexpr std::uintptr_t kBlock = std::uintptr_t{2} << 20;

xfer_status prefetch_to_host(char *at, std::size_t n, cudaStream_t s) {
    const cudaMemLocation host{cudaMemLocationTypeHost, 0};
    return check(cudaMemPrefetchAsync(at, n, host, 0, s), "cudaMemPrefetchAsync(%zu bytes, host)", n);
}

struct HostCopy {
    const Context *ctx;
    void *dst;
    const void *src;
    std::size_t bytes;
};

void CUDART_CB copy_on_host(void *user) {
    auto *c = static_cast<HostCopy *>(user);
    copy_on_host_threads(*c->ctx, c->dst, c->src, c->bytes);
    delete c;
}

} // namespace

ManagedToHost::~ManagedToHost() { (void)close(); }

bool ManagedToHost::allocate() noexcept {
    for (Slot &slot : slots_) {
        const cudaError_t made = method_ == ToHost::dma ? cudaMalloc(&slot.memory, chunk_)
                                                        : cudaHostAlloc(&slot.memory, chunk_, cudaHostAllocDefault);
        if (made != cudaSuccess || cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaGetLastError();
            (void)close();
            return false;
        }
    }
    return true;
}

xfer_status ManagedToHost::chunk(char *at, std::size_t n, cudaStream_t s) noexcept {
    Slot &slot = slots_[next_];
    next_ = (next_ + 1) % kSlots;
    if (auto st = check(cudaStreamWaitEvent(s, slot.done, 0), "cudaStreamWaitEvent(managed to-host slot)")) {
        return st;
    }
    if (auto st = check(cudaMemcpyAsync(slot.memory, at, n, cudaMemcpyDefault, s),
                        "cudaMemcpyAsync(%zu bytes of managed memory into the to-host slot)", n)) {
        return st;
    }
    void *ptrs[1] = {at};
    std::size_t sizes[1] = {n};
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    std::size_t first[1] = {0};
    const cudaError_t discarded = cudaMemDiscardAndPrefetchBatchAsync(ptrs, sizes, 1, &host, first, 1, 0, s);
    if (discarded == cudaErrorNotSupported || discarded == cudaErrorCallRequiresNewerDriver) {
        // A driver without discard: a plain prefetch keeps the result right (its bytes are
        // overwritten by the copy below), only slower.
        (void)cudaGetLastError();
        if (auto st = prefetch_to_host(at, n, s)) {
            return st;
        }
    } else if (auto st = check(discarded, "cudaMemDiscardAndPrefetchBatchAsync(%zu bytes, host)", n)) {
        return st;
    }
    if (method_ == ToHost::dma) {
        if (auto st = check(cudaMemcpyAsync(at, slot.memory, n, cudaMemcpyDefault, s),
                            "cudaMemcpyAsync(%zu bytes from the to-host slot into host-resident managed memory)", n)) {
            return st;
        }
    } else {
        auto *work = new (std::nothrow) HostCopy{&owner_, at, slot.memory, n};
        if (work == nullptr) {
            return fail(XFER_ERROR_OUT_OF_MEMORY, "managed to-host: out of host memory for bookkeeping");
        }
        if (auto st = check(cudaLaunchHostFunc(s, copy_on_host, work), "cudaLaunchHostFunc(managed to-host copy)")) {
            delete work;
            return st;
        }
    }
    return check(cudaEventRecord(slot.done, s), "cudaEventRecord(managed to-host slot)");
}

xfer_status ManagedToHost::to_host(char *range, std::size_t bytes, cudaStream_t s) noexcept {
    if (method_ == ToHost::prefetch) {
        return prefetch_to_host(range, bytes, s);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!set_up_) {
        set_up_ = true;
        usable_ = allocate();
    }
    const auto begin = reinterpret_cast<std::uintptr_t>(range);
    const std::uintptr_t lo = (begin + kBlock - 1) / kBlock * kBlock;
    const std::uintptr_t hi = (begin + bytes) / kBlock * kBlock;
    if (!usable_ || hi <= lo) {
        return prefetch_to_host(range, bytes, s); // no slots, or no whole block inside the range
    }
    if (lo > begin) {
        if (auto st = prefetch_to_host(range, lo - begin, s)) {
            return st;
        }
    }
    for (std::uintptr_t at = lo; at < hi; at += chunk_) {
        const std::size_t n = hi - at < chunk_ ? hi - at : chunk_;
        if (auto st = chunk(reinterpret_cast<char *>(at), n, s)) {
            return st;
        }
    }
    if (begin + bytes > hi) {
        return prefetch_to_host(reinterpret_cast<char *>(hi), begin + bytes - hi, s);
    }
    return XFER_SUCCESS;
}

xfer_status ManagedToHost::close() noexcept {
    xfer_status st = XFER_SUCCESS;
    for (Slot &slot : slots_) {
        st = last_failure(st, retire_slot_event(&slot.done, "managed to-host slot"));
        if (slot.memory != nullptr) {
            st = last_failure(st, method_ == ToHost::dma
                                      ? check(cudaFree(slot.memory), "cudaFree(managed to-host slot)")
                                      : check(cudaFreeHost(slot.memory), "cudaFreeHost(managed to-host slot)"));
        }
        slot = Slot{};
    }
    return st;
}

} // namespace xfer::cuda::managed

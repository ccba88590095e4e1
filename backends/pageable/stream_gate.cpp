// SPDX-License-Identifier: Apache-2.0
#include "stream_gate.hpp"

#include <cuda.h> // the driver's types and flag values only; entry points come from the runtime

#include "xfer_cuda/context.hpp"

namespace xfer::cuda::pageable {
namespace {

constexpr std::size_t kWordsPerPage = 1024;

using DriverMemOp = CUresult(CUDAAPI *)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// 11070: the version whose signature (CUdeviceptr_v2, the _v2 entry points) CUDA 13 still has.
bool look_up(const char *symbol, void **fn, std::string *why) {
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, fn, 11070, cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || *fn == nullptr) {
        (void)cudaGetLastError();
        *why = std::string("cudaGetDriverEntryPointByVersion(") + symbol + ") found no driver entry point";
        return false;
    }
    return true;
}

} // namespace

StreamGate::~StreamGate() { stop(); }

bool StreamGate::start(std::string *why) noexcept {
    void *wait = nullptr;
    void *write = nullptr;
    if (!look_up("cuStreamWaitValue32", &wait, why) || !look_up("cuStreamWriteValue32", &write, why)) {
        return false;
    }
    wait_ = reinterpret_cast<WaitFn>(wait);
    write_ = reinterpret_cast<WaitFn>(write);
    // Prove the pair on this device: a stream waits for a flag that a stream write opens.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!grow()) {
        *why = "cudaHostAlloc(cudaHostAllocMapped) of the gate flags failed";
        return false;
    }
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        *why = "cudaStreamCreateWithFlags failed while proving stream memory operations";
        return false;
    }
    Word &w = words_.front();
    const auto to = reinterpret_cast<DriverMemOp>(write_);
    const auto until = reinterpret_cast<DriverMemOp>(wait_);
    const CUresult wrote = to(reinterpret_cast<CUstream>(s), w.device, 1, CU_STREAM_WRITE_VALUE_DEFAULT);
    const CUresult waited = until(reinterpret_cast<CUstream>(s), w.device, 1, CU_STREAM_WAIT_VALUE_GEQ);
    const cudaError_t synced = cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
    (void)cudaGetLastError();
    if (wrote != CUDA_SUCCESS || waited != CUDA_SUCCESS || synced != cudaSuccess || *w.host != 1) {
        *why = "stream memory operations (cuStreamWriteValue32/cuStreamWaitValue32) failed on this device: CUresult " +
               std::to_string(wrote) + "/" + std::to_string(waited);
        return false;
    }
    w.value = 1;
    return true;
}

bool StreamGate::grow() noexcept {
    void *page = nullptr;
    if (cudaHostAlloc(&page, kWordsPerPage * sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    void *device = nullptr;
    if (cudaHostGetDevicePointer(&device, page, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaFreeHost(page);
        return false;
    }
    try {
        pages_.push_back(page);
        auto *words = static_cast<std::uint32_t *>(page);
        for (std::size_t i = 0; i < kWordsPerPage; ++i) {
            words[i] = 0;
            Word w;
            w.host = words + i;
            w.device = reinterpret_cast<std::uint64_t>(static_cast<std::uint32_t *>(device) + i);
            free_.push_back(words_.size());
            words_.push_back(w);
        }
    } catch (...) {
        return false;
    }
    return true;
}

void StreamGate::recycle_written_locked() noexcept {
    while (!written_.empty()) {
        Word &w = words_[written_.front()];
        if (cudaEventQuery(w.written) != cudaSuccess) {
            (void)cudaGetLastError();
            return; // FIFO: writes land in the order the engine's stream queued them
        }
        free_.push_back(written_.front());
        written_.pop_front();
    }
}

StreamGate::Ticket StreamGate::acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    recycle_written_locked();
    if (free_.empty() && !grow()) {
        throw std::bad_alloc();
    }
    const std::size_t index = free_.back();
    free_.pop_back();
    // Targets only grow: a wait still queued for an earlier target of this word passes too,
    // which is right, since that copy is done (its word was recycled only after).
    return Ticket{index, ++words_[index].value};
}

void StreamGate::give_back(const Ticket &t) {
    std::lock_guard<std::mutex> lock(mutex_);
    *words_[t.index].host = t.target; // nothing waits for it; keep the word's value monotonic
    free_.push_back(t.index);
}

xfer_status StreamGate::hold(cudaStream_t stream, const Ticket &t) noexcept {
    const auto until = reinterpret_cast<DriverMemOp>(wait_);
    std::uint64_t device = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_); // words_ may grow (and move) meanwhile
        device = words_[t.index].device;
    }
    const CUresult r = until(reinterpret_cast<CUstream>(stream), device, t.target, CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) {
        return fail(XFER_ERROR_BACKEND,
                    "cuStreamWaitValue32 (holding the stream until a staged copy is done): "
                    "CUresult %d",
                    static_cast<int>(r));
    }
    return XFER_SUCCESS;
}

int StreamGate::open_from_stream(cudaStream_t stream, const Ticket &t) noexcept {
    const auto to = reinterpret_cast<DriverMemOp>(write_);
    std::lock_guard<std::mutex> lock(mutex_);
    Word &w = words_[t.index];
    const CUresult r = to(reinterpret_cast<CUstream>(stream), w.device, t.target, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r != CUDA_SUCCESS) {
        return static_cast<int>(r);
    }
    if (w.written == nullptr && cudaEventCreateWithFlags(&w.written, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        w.written = nullptr;
    }
    if (w.written != nullptr && cudaEventRecord(w.written, stream) == cudaSuccess) {
        written_.push_back(t.index);
    } else {
        (void)cudaGetLastError(); // the word is not recycled: a page holds 1024, a leak of 4 bytes
    }
    return 0;
}

void StreamGate::open_from_host(const Ticket &t) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    __atomic_store_n(words_[t.index].host, t.target, __ATOMIC_RELEASE);
    free_.push_back(t.index);
}

int StreamGate::signal_from_stream(cudaStream_t stream, const Ticket &t) noexcept {
    const auto to = reinterpret_cast<DriverMemOp>(write_);
    std::uint64_t device = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        device = words_[t.index].device;
    }
    return static_cast<int>(to(reinterpret_cast<CUstream>(stream), device, t.target, CU_STREAM_WRITE_VALUE_DEFAULT));
}

bool StreamGate::is_open(const Ticket &t) noexcept {
    std::uint32_t *word = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        word = words_[t.index].host;
    }
    // Wrap-around safe, as the driver's own GEQ compare: (int32_t)(value - target) >= 0.
    return static_cast<std::int32_t>(__atomic_load_n(word, __ATOMIC_ACQUIRE) - t.target) >= 0;
}

void StreamGate::recycle(const Ticket &t) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(t.index);
}

void StreamGate::stop() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Word &w : words_) {
        if (w.written != nullptr) {
            (void)cudaEventSynchronize(w.written);
            (void)cudaEventDestroy(w.written);
        }
    }
    for (void *page : pages_) {
        (void)cudaFreeHost(page);
    }
    (void)cudaGetLastError();
    pages_.clear();
    words_.clear();
    free_.clear();
    written_.clear();
}

} // namespace xfer::cuda::pageable

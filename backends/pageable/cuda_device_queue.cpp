// SPDX-License-Identifier: Apache-2.0
#include "cuda_device_queue.hpp"

#include <cuda.h> // the driver's types and flag values only; the entry point comes from the runtime
#include <cuda_runtime_api.h>

#include "xfer_cuda/context.hpp"
#include "xfer_cuda/driver_entry.hpp"

namespace xfer::cuda::pageable {
namespace {

using DriverBatch = CUresult(CUDAAPI *)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);

// At most this many operations per cuStreamBatchMemOp call (the pipeline queues a few).
constexpr std::size_t kMaxBatch = 16;

std::string describe(cudaError_t err) {
    return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) + "=" + std::to_string(int(err)) + ")";
}

} // namespace

bool CudaDeviceQueue::start(const FlagWord &probe, std::string *why) noexcept {
    // 12000: the version whose signature (cuStreamBatchMemOp_v2) CUDA 13 has.
    batch_ = driver_entry<BatchFn>("cuStreamBatchMemOp", 12000);
    if (batch_ == nullptr) {
        describe_into(why, [] {
            return std::string("cudaGetDriverEntryPointByVersion(cuStreamBatchMemOp) found no driver entry point");
        });
        return false;
    }
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        describe_into(
            why, [] { return std::string("cudaStreamCreateWithFlags failed while proving stream memory operations"); });
        return false;
    }
    const std::uint32_t target = *probe.host + 1;
    const FlagOp ops[] = {{FlagOp::write, probe, target}, {FlagOp::wait, probe, target}};
    std::string failed;
    const xfer_status queued = flags(s, ops, 2, &failed);
    const cudaError_t synced = cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
    (void)cudaGetLastError();
    if (queued != XFER_SUCCESS || synced != cudaSuccess || !reached(probe.host, target)) {
        describe_into(why, [&] {
            return "stream memory operations (cuStreamBatchMemOp) failed on this device: " +
                   (failed.empty() ? describe(synced) : failed);
        });
        return false;
    }
    return true;
}

xfer_status CudaDeviceQueue::flags(void *stream, const FlagOp *ops, std::size_t count, std::string *why) noexcept {
    const auto batch = reinterpret_cast<DriverBatch>(batch_);
    while (count > 0) {
        CUstreamBatchMemOpParams params[kMaxBatch] = {};
        const std::size_t n = count < kMaxBatch ? count : kMaxBatch;
        for (std::size_t i = 0; i < n; ++i) {
            if (ops[i].kind == FlagOp::wait) {
                params[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
                params[i].waitValue.address = ops[i].word.device;
                params[i].waitValue.value = ops[i].value;
                params[i].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
            } else {
                params[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
                params[i].writeValue.address = ops[i].word.device;
                params[i].writeValue.value = ops[i].value;
                params[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT; // after a memory fence
            }
        }
        const CUresult r = batch(static_cast<CUstream>(stream), static_cast<unsigned>(n), params, 0);
        if (r != CUDA_SUCCESS) {
            describe_into(why, [&] {
                return "cuStreamBatchMemOp (" + std::to_string(n) + " flag operations of a staged copy): CUresult " +
                       std::to_string(int(r));
            });
            return r == CUDA_ERROR_OUT_OF_MEMORY ? XFER_ERROR_OUT_OF_MEMORY : XFER_ERROR_BACKEND;
        }
        ops += n;
        count -= n;
    }
    return XFER_SUCCESS;
}

xfer_status CudaDeviceQueue::copy(void *stream, void *dst, const void *src, std::size_t bytes, Way way,
                                  std::string *why) noexcept {
    const cudaMemcpyKind kind = way == Way::to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, static_cast<cudaStream_t>(stream));
    if (err == cudaSuccess) {
        return XFER_SUCCESS;
    }
    (void)cudaGetLastError();
    describe_into(why, [&] {
        return "cudaMemcpyAsync(" + std::to_string(bytes) + " bytes of a staged copy, " +
               (way == Way::to_device ? "cudaMemcpyHostToDevice from" : "cudaMemcpyDeviceToHost into") +
               " a staging slot): " + describe(err);
    });
    return status_from_cuda(err);
}

xfer_status CudaDeviceQueue::health(void *stream, std::string *why) noexcept {
    const cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(stream));
    if (err == cudaSuccess || err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return XFER_SUCCESS;
    }
    (void)cudaGetLastError();
    describe_into(why, [&] { return "cudaStreamQuery: " + describe(err); });
    return status_from_cuda(err);
}

bool CudaDeviceQueue::idle(void *stream) noexcept {
    const auto s = static_cast<cudaStream_t>(stream);
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) {
        return false;
    }
    // A stream being captured into a graph is never called idle: cudaStreamQuery would end the
    // capture with an error.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
        (void)cudaGetLastError();
        return false;
    }
    const cudaError_t err = cudaStreamQuery(s);
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); // busy (not an error), or a failure the copy's own calls report
    }
    return err == cudaSuccess;
}

} // namespace xfer::cuda::pageable

// SPDX-License-Identifier: Apache-2.0
// The staging pipeline's device side on CUDA: flag operations as stream memory operations
// (cuStreamBatchMemOp with CU_STREAM_MEM_OP_WAIT_VALUE_32 / WRITE_VALUE_32 on words in mapped
// page-locked memory), chunk DMAs as cudaMemcpyAsync, health and idleness as cudaStreamQuery. The runtime
// API has no stream memory operations; the driver's entry point is looked up through
// cudaGetDriverEntryPointByVersion, so nothing links libcuda directly.
#pragma once

#include <string>

#include "staging_pipeline.hpp"

namespace xfer::cuda::pageable {

class CudaDeviceQueue final : public DeviceQueue {
  public:
    // Looks up the entry point and proves it on the current device (a stream writes a word,
    // then waits for it). False with the reason in *why when stream memory operations cannot be
    // used here: the engine then stays off and copies go the direct way. `probe` is a mapped
    // word (host and device views) the proof may use.
    bool start(const FlagWord &probe, std::string *why) noexcept;

    xfer_status flags(void *stream, const FlagOp *ops, std::size_t count, std::string *why) noexcept override;
    xfer_status copy(void *stream, void *dst, const void *src, std::size_t bytes, Way way,
                     std::string *why) noexcept override;
    xfer_status health(void *stream, std::string *why) noexcept override;
    // cudaStreamQuery == cudaSuccess; false for the legacy and per-thread default streams, whose
    // work also waits for other streams' (xfer's own streams are non-blocking), and for a stream
    // being captured (cudaStreamIsCapturing first: a query would invalidate the capture).
    bool idle(void *stream) noexcept override;

  private:
    using BatchFn = int (*)(void *, unsigned, void *, unsigned);
    BatchFn batch_ = nullptr;
};

} // namespace xfer::cuda::pageable

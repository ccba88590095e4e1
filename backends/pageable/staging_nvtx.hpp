// SPDX-License-Identifier: Apache-2.0
// NVTX ranges of the staging workers' chunk work, in the "xfer" domain of the copy calls' ranges
// (core/src/nvtx_ranges.hpp): on Nsight Systems' timeline each worker thread shows the pieces it
// copied into a staging slot ("stage to device") or out of one ("drain to host"), with the
// piece's bytes as payload, under the call that queued them. Built only where the NVTX v3 header
// is found (XFER_HAVE_NVTX); otherwise the range is empty.
//
// With no tool attached nothing is built or called: NVTX tools attach through the
// NVTX_INJECTION64_PATH variable (Nsight Systems sets it), read once, so a piece pays one
// predictable branch.
#pragma once

#include <cstdint>

#if defined(XFER_HAVE_NVTX)
#include <cstdlib>

#include <nvtx3/nvToolsExt.h>
#endif

namespace xfer::cuda::pageable {

#if defined(XFER_HAVE_NVTX)

class StagingPieceRange {
  public:
    StagingPieceRange(bool to_device, std::uint64_t bytes) noexcept {
        if (attached()) push(to_device, bytes);
    }
    ~StagingPieceRange() {
        if (on_) nvtxDomainRangePop(domain());
    }
    StagingPieceRange(const StagingPieceRange &) = delete;
    StagingPieceRange &operator=(const StagingPieceRange &) = delete;

  private:
    static bool attached() noexcept {
        static const bool yes = std::getenv("NVTX_INJECTION64_PATH") != nullptr;
        return yes;
    }
    static nvtxDomainHandle_t domain() noexcept {
        static const nvtxDomainHandle_t d = nvtxDomainCreateA("xfer"); // the core's domain: same name, same handle
        return d;
    }
    void push(bool to_device, std::uint64_t bytes) noexcept {
        nvtxEventAttributes_t a{};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = to_device ? "stage to device" : "drain to host";
        a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
        a.payload.ullValue = bytes;
        nvtxDomainRangePushEx(domain(), &a);
        on_ = true;
    }
    bool on_ = false;
};

#else

class StagingPieceRange {
  public:
    StagingPieceRange(bool, std::uint64_t) noexcept {}
    StagingPieceRange(const StagingPieceRange &) = delete;
    StagingPieceRange &operator=(const StagingPieceRange &) = delete;
};

#endif

} // namespace xfer::cuda::pageable

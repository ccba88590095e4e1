// SPDX-License-Identifier: Apache-2.0
// NVTX ranges of the copy calls, in the "xfer" domain, so that Nsight Systems shows on its
// timeline what each call did: a range per call (the function's name, its bytes as payload)
// and, inside it, a mark per path the bytes took (the path's name as message and category,
// its bytes as payload). Header-only NVTX v3 from the CUDA toolkit; without it (XFER_HAVE_NVTX
// undefined) everything here is empty.
//
// With no tool attached nothing is built or called: NVTX tools attach through the
// NVTX_INJECTION64_PATH variable (Nsight Systems sets it), read once, so a call pays one
// predictable branch.
#pragma once

#include <cstdint>

#include <xfer/xfer.h>

#if defined(XFER_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace xfer::core {

#if defined(XFER_HAVE_NVTX)

namespace nvtx {
// True when a tool was attached at load (NVTX_INJECTION64_PATH set).
extern const bool attached;
nvtxDomainHandle_t domain() noexcept;
} // namespace nvtx

class NvtxCallRange {
  public:
    NvtxCallRange(const char *function, std::uint64_t bytes) noexcept {
        if (nvtx::attached) push(function, bytes);
    }
    ~NvtxCallRange() {
        if (on_) nvtxDomainRangePop(nvtx::domain());
    }
    NvtxCallRange(const NvtxCallRange &) = delete;
    NvtxCallRange &operator=(const NvtxCallRange &) = delete;
    void mark_path(xfer_copy_path path, std::uint64_t bytes) noexcept {
        if (on_) mark(path, bytes);
    }

  private:
    void push(const char *function, std::uint64_t bytes) noexcept;
    static void mark(xfer_copy_path path, std::uint64_t bytes) noexcept;
    bool on_ = false;
};

#else

class NvtxCallRange {
  public:
    NvtxCallRange(const char *, std::uint64_t) noexcept {}
    NvtxCallRange(const NvtxCallRange &) = delete;
    NvtxCallRange &operator=(const NvtxCallRange &) = delete;
    void mark_path(xfer_copy_path, std::uint64_t) noexcept {}
};

#endif

} // namespace xfer::core

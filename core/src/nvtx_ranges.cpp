// SPDX-License-Identifier: Apache-2.0
#include "nvtx_ranges.hpp"

#if defined(XFER_HAVE_NVTX)

#include <cstdlib>

namespace xfer::core {
namespace nvtx {

const bool attached = std::getenv("NVTX_INJECTION64_PATH") != nullptr;

nvtxDomainHandle_t domain() noexcept {
    static const nvtxDomainHandle_t d = [] {
        nvtxDomainHandle_t h = nvtxDomainCreateA("xfer");
        // Categories name the paths (category = path + 1; 0 means none in NVTX).
        for (int p = 0; p < XFER_PATH_COUNT; ++p) {
            nvtxDomainNameCategoryA(h, static_cast<std::uint32_t>(p + 1),
                                    xfer_copy_path_name(static_cast<xfer_copy_path>(p)));
        }
        return h;
    }();
    return d;
}

} // namespace nvtx

void NvtxCallRange::push(const char *function, std::uint64_t bytes) noexcept {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = function;
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = bytes;
    nvtxDomainRangePushEx(nvtx::domain(), &a);
    on_ = true; // popped whatever the push answered (a tool that keeps no stack answers < 0)
}

void NvtxCallRange::mark(xfer_copy_path path, std::uint64_t bytes) noexcept {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = static_cast<std::uint32_t>(path) + 1;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = xfer_copy_path_name(path);
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = bytes;
    nvtxDomainMarkEx(nvtx::domain(), &a);
}

} // namespace xfer::core

#endif

// SPDX-License-Identifier: Apache-2.0
#include "kernels.hpp"

namespace xfer::tool {

std::unique_ptr<Kernels> make_kernels(const Context &ctx) {
    switch (ctx.device_kind()) {
    case XFER_DEVICE_KIND_HOST:
        return make_host_kernels();
    case XFER_DEVICE_KIND_CUDA:
        return make_cuda_kernels(ctx.device());
    default:
        break;
    }
    throw XferError(XFER_ERROR_NOT_SUPPORTED, "backend '" + ctx.backend() + "' has a device kind (" +
                                                  std::to_string(static_cast<int>(ctx.device_kind())) +
                                                  ") xfer-tool has no kernels for");
}

} // namespace xfer::tool

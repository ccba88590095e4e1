#include "xfer_cuda/pageable_order.hpp"

#include "xfer_cuda/errors.hpp"

namespace xfer::cuda {

xfer_status wait_before_pageable_copy(cudaStream_t stream) noexcept {
    return check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (keeping stream order before a copy "
                                                "that touches pageable host memory)");
}

}  // namespace xfer::cuda

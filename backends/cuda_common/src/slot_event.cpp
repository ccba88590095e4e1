// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/slot_event.hpp"

#include "xfer_cuda/errors.hpp"

namespace xfer::cuda {

xfer_status retire_slot_event(cudaEvent_t *done, const char *what) noexcept {
    if (*done == nullptr) {
        return XFER_SUCCESS;
    }
    const xfer_status waited = check(cudaEventSynchronize(*done), "cudaEventSynchronize(%s)", what);
    const xfer_status destroyed = check(cudaEventDestroy(*done), "cudaEventDestroy(%s)", what);
    *done = nullptr;
    return last_failure(waited, destroyed);
}

}  // namespace xfer::cuda

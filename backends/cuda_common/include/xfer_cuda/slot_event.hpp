// SPDX-License-Identifier: Apache-2.0
// The event of a reusable slot (packed batches, managed to-host): recorded after the slot's
// last queued use, waited for on the GPU by its next user, and retired when the slot is freed.
#pragma once

#include <cuda_runtime_api.h>
#include <xfer/xfer.h>

namespace xfer::cuda {

// Waits for the work recorded on *done (cudaEventSynchronize), destroys the event and sets it
// to nullptr; nothing for nullptr. `what` names the slot in a failure message. Reports the last
// failure.
xfer_status retire_slot_event(cudaEvent_t *done, const char *what) noexcept;

}  // namespace xfer::cuda

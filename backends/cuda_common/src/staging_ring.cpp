#include "xfer_cuda/staging_ring.hpp"

#include "xfer_cuda/errors.hpp"

namespace xfer::cuda {

StagingRing::~StagingRing() { (void)release(); }

bool StagingRing::allocate() noexcept {
    if (allocated_) {
        return true;
    }
    allocated_ = true;  // from here on, release() frees whatever is non-null
    for (std::size_t i = 0; i < k_slots; ++i) {
        void *p = nullptr;
        if (cudaHostAlloc(&p, slot_bytes_, cudaHostAllocDefault) != cudaSuccess) {
            break;
        }
        memory_[i] = static_cast<unsigned char *>(p);
        if (cudaEventCreateWithFlags(&events_[i], cudaEventDisableTiming) != cudaSuccess) {
            events_[i] = nullptr;
            break;
        }
    }
    if (events_[k_slots - 1] != nullptr) {
        return true;
    }
    (void)cudaGetLastError();  // the failure is handled (direct path): keep it from the application
    (void)release();
    (void)cudaGetLastError();
    return false;
}

xfer_status StagingRing::release() noexcept {
    xfer_status result = XFER_SUCCESS;
    for (std::size_t i = 0; i < k_slots; ++i) {
        if (events_[i] != nullptr) {
            // A DMA queued by the last copy through this slot may still be reading it.
            result = last_failure(result, check(cudaEventSynchronize(events_[i]),
                                                "cudaEventSynchronize (last DMA of staging slot %zu)", i));
            result = last_failure(result, check(cudaEventDestroy(events_[i]),
                                                "cudaEventDestroy (event of staging slot %zu)", i));
            events_[i] = nullptr;
        }
        if (memory_[i] != nullptr) {
            result = last_failure(result, check(cudaFreeHost(memory_[i]), "cudaFreeHost(%zu bytes, staging slot %zu)",
                                                slot_bytes_, i));
            memory_[i] = nullptr;
        }
    }
    allocated_ = false;
    return result;
}

}  // namespace xfer::cuda

// The stager's lifecycle: its ring and threads are made at the first staged copy, freed at
// context_destroy.
#include "xfer_cuda/chunk_plan.hpp"
#include "xfer_cuda/staged_copy.hpp"

namespace xfer::cuda {

PageableStager::PageableStager(const StagingConfig &config) noexcept : config_(config) {}

PageableStager::~PageableStager() = default;

bool PageableStager::takes(std::size_t bytes) noexcept {
    if (!should_stage(bytes, config_.threads)) {
        return false;
    }
    try {
        std::lock_guard<std::mutex> lock(setup_mutex_);
        if (!set_up_) {
            // Tried once: a failed cudaHostAlloc (the host is short of lockable memory) would
            // fail again, slowly, on every copy. The direct path serves the context instead.
            set_up_ = true;
            auto ring = std::make_unique<StagingRing>(config_.chunk_size);
            if (ring->allocate()) {
                pool_ = std::make_unique<HostCopyPool>(config_.threads);
                ring_ = std::move(ring);
                usable_ = true;
            }
        }
        return usable_;
    } catch (...) {
        // No threads (std::system_error) or no memory for them: the ring is freed by its
        // destructor as `ring` goes out of scope, and the copy goes the direct way.
        (void)cudaGetLastError();
        return false;
    }
}

xfer_status PageableStager::close() noexcept {
    pool_.reset();  // joins the workers: no staged copy runs while the context is destroyed
    if (!ring_) {
        return XFER_SUCCESS;
    }
    const xfer_status released = ring_->release();
    ring_.reset();
    usable_ = false;
    return released;
}

}  // namespace xfer::cuda

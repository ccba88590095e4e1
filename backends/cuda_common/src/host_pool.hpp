// SPDX-License-Identifier: Apache-2.0
// Private to cuda_common: a CUDA context's one pool of host threads (host_threads of them at
// most), serving every engine that copies on the host: the pageable staging engine's workers,
// the helpers of packed batches' gathers and scatters, and the managed backend's staged copies
// to the host. Started at its first use, joined at context close. Its threads make no CUDA
// call: what they run only copies bytes and stores flags.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>

namespace boost::asio {
class thread_pool;
}

namespace xfer::cuda {

class HostPool {
  public:
    explicit HostPool(std::size_t threads) noexcept;
    ~HostPool();
    HostPool(const HostPool &) = delete;
    HostPool &operator=(const HostPool &) = delete;

    // The pool, started now if it was not (nullptr when the system refused its threads).
    boost::asio::thread_pool *get() noexcept;
    // Runs `task` on one of the pool's threads; false (task not run) when there is no pool.
    bool run(std::function<void()> task) noexcept;
    // Waits for every task and stops the threads (context close: nothing is queued any more).
    void join() noexcept;
    std::size_t threads() const noexcept { return threads_; }

  private:
    const std::size_t threads_;
    std::mutex mutex_;
    std::unique_ptr<boost::asio::thread_pool> pool_;
    bool refused_ = false;
};

} // namespace xfer::cuda

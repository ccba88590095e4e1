// Host threads that share the memcpy of one chunk between pageable memory and a staging slot.
// One thread cannot saturate a PCIe Gen5 x16 link (memcpy runs at ~10 GB/s per thread; the
// link moves ~55 GB/s), so the chunk is split across a boost::asio::thread_pool.
#pragma once

#include <cstddef>
#include <memory>

namespace boost::asio {
class thread_pool;
}

namespace xfer::cuda {

class HostCopyPool {
public:
    // `threads` host threads copy each chunk, the calling thread included (it copies a piece
    // itself instead of sleeping until the pool is done), so the pool holds threads - 1
    // workers, started here. threads 0 or 1: no pool, the caller copies alone. Throws
    // (std::system_error, std::bad_alloc) when the workers cannot be started.
    explicit HostCopyPool(std::size_t threads);
    ~HostCopyPool();  // joins the workers; no copy is running by then (copy() waits for its pieces)
    HostCopyPool(const HostCopyPool &) = delete;
    HostCopyPool &operator=(const HostCopyPool &) = delete;

    // Copies `bytes` from `src` to `dst` (not overlapping) and returns when every byte is
    // there. Thread-safe: calls from several threads share the workers. Never fails: a piece
    // that cannot be handed to a worker is copied by the caller.
    void copy(void *dst, const void *src, std::size_t bytes) noexcept;

    std::size_t threads() const noexcept { return threads_; }

private:
    std::size_t threads_;
    std::unique_ptr<boost::asio::thread_pool> workers_;
};

}  // namespace xfer::cuda

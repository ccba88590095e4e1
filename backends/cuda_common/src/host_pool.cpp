// SPDX-License-Identifier: Apache-2.0
#include "host_pool.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace xfer::cuda {

HostPool::HostPool(std::size_t threads) noexcept : threads_(threads) {}

HostPool::~HostPool() { join(); }

boost::asio::thread_pool *HostPool::get() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_ && !refused_ && threads_ > 0) {
        try {
            pool_ = std::make_unique<boost::asio::thread_pool>(threads_);
        } catch (...) {
            refused_ = true; // the engines then copy on the calling (or callback) thread alone
        }
    }
    return pool_.get();
}

bool HostPool::run(std::function<void()> task) noexcept {
    boost::asio::thread_pool *pool = get();
    if (pool == nullptr) return false;
    try {
        boost::asio::post(*pool, std::move(task));
        return true;
    } catch (...) {
        return false;
    }
}

void HostPool::join() noexcept {
    std::unique_ptr<boost::asio::thread_pool> pool;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pool.swap(pool_);
    }
    if (pool) pool->join();
}

} // namespace xfer::cuda

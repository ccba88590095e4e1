#include "xfer_cuda/host_copy_pool.hpp"

#include <condition_variable>
#include <cstring>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "xfer_cuda/chunk_plan.hpp"

namespace xfer::cuda {
namespace {

// The caller waits for the pieces it handed out: they point into its chunk.
class Countdown {
public:
    explicit Countdown(std::size_t count) : left_(count) {}
    void done() {
        // Notified under the lock: the waiter may destroy this object as soon as it sees 0.
        std::lock_guard<std::mutex> lock(mutex_);
        if (--left_ == 0) {
            zero_.notify_all();
        }
    }
    void wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        zero_.wait(lock, [&] { return left_ == 0; });
    }

private:
    std::mutex mutex_;
    std::condition_variable zero_;
    std::size_t left_;
};

}  // namespace

HostCopyPool::HostCopyPool(std::size_t threads) : threads_(threads == 0 ? 1 : threads) {
    if (threads_ > 1) {
        workers_ = std::make_unique<boost::asio::thread_pool>(threads_ - 1);
    }
}

HostCopyPool::~HostCopyPool() {
    if (workers_) {
        workers_->join();
    }
}

void HostCopyPool::copy(void *dst, const void *src, std::size_t bytes) noexcept {
    auto *d = static_cast<unsigned char *>(dst);
    const auto *s = static_cast<const unsigned char *>(src);
    const std::size_t piece = plan_piece_bytes(bytes, threads_);
    const std::size_t pieces = span_count(bytes, piece);
    // Piece 0 stays with the caller; the others go to the workers. Counted before any is
    // handed out, so a worker finishing early never sees the count reach 0 too soon.
    Countdown pending(pieces > 1 ? pieces - 1 : 0);
    for (std::size_t i = 1; i < pieces; ++i) {
        const Span p = nth_span(bytes, piece, i);
        bool handed_out = false;
        if (workers_) {
            try {
                boost::asio::post(*workers_, [&pending, d, s, p] {
                    std::memcpy(d + p.offset, s + p.offset, p.bytes);
                    pending.done();
                });
                handed_out = true;
            } catch (...) {
                // No memory for the handler: this piece is copied here instead.
            }
        }
        if (!handed_out) {
            std::memcpy(d + p.offset, s + p.offset, p.bytes);
            pending.done();
        }
    }
    if (pieces > 0) {
        const Span first = nth_span(bytes, piece, 0);
        std::memcpy(d + first.offset, s + first.offset, first.bytes);
    }
    pending.wait();
}

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "fake_device_queue.hpp"

#include <cstring>

namespace xfer::test {

using cuda::pageable::FlagOp;
using cuda::pageable::FlagWord;
using cuda::pageable::reached;

FakeStream::FakeStream() : thread_(&FakeStream::run, this) {}

FakeStream::~FakeStream() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void FakeStream::push(const Op &op) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ops_.push_back(op);
    }
    changed_.notify_all();
}

void FakeStream::hold() {
    Op op;
    op.kind = Op::hold;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        held_ = true;
    }
    push(op);
}

void FakeStream::release() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        held_ = false;
    }
    changed_.notify_all();
}

void FakeStream::copy(void *dst, const void *src, std::size_t bytes) {
    Op op;
    op.kind = Op::copy;
    op.dst = dst;
    op.src = src;
    op.bytes = bytes;
    push(op);
}

void FakeStream::freeze() {
    std::lock_guard<std::mutex> lock(mutex_);
    frozen_ = true;
}

void FakeStream::thaw() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        frozen_ = false;
    }
    changed_.notify_all();
}

bool FakeStream::idle() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ops_.empty() && !busy_ && !failed_.load();
}

bool FakeStream::synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return failed_.load() || (ops_.empty() && !busy_); });
    return !failed_.load();
}

void FakeStream::fail() {
    failed_.store(true);
    changed_.notify_all();
}

void FakeStream::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stop_ || (!ops_.empty() && !failed_.load() && !frozen_); });
        if (stop_) {
            return;
        }
        const Op op = ops_.front();
        busy_ = true;
        if (op.kind == Op::hold) {
            changed_.wait(lock, [&] { return stop_ || !held_ || failed_.load(); });
        } else {
            lock.unlock();
            if (op.kind == Op::wait) {
                while (!reached(op.word, op.value) && !failed_.load()) {
                    std::this_thread::yield();
                }
            } else if (!failed_.load()) {
                if (op.kind == Op::write) {
                    __atomic_store_n(op.word, op.value, __ATOMIC_RELEASE);
                } else {
                    std::memcpy(op.dst, op.src, op.bytes);
                }
            }
            lock.lock();
        }
        busy_ = false;
        if (failed_.load()) {
            continue; // stopped where it was: a failed stream runs nothing more
        }
        ops_.pop_front();
        executed_.fetch_add(1);
        changed_.notify_all();
    }
}

xfer_status FakeDeviceQueue::flags(void *stream, const FlagOp *ops, std::size_t count, std::string *) noexcept {
    auto *s = static_cast<FakeStream *>(stream);
    for (std::size_t i = 0; i < count; ++i) {
        FakeStream::Op op;
        op.kind = ops[i].kind == FlagOp::wait ? FakeStream::Op::wait : FakeStream::Op::write;
        op.word = reinterpret_cast<std::uint32_t *>(ops[i].word.device);
        op.value = ops[i].value;
        s->push(op);
    }
    return XFER_SUCCESS;
}

xfer_status FakeDeviceQueue::copy(void *stream, void *dst, const void *src, std::size_t bytes, cuda::pageable::Way,
                                  std::string *why) noexcept {
    copies_.fetch_add(1);
    std::size_t n = refuse_in_.load();
    if (n != 0) {
        refuse_in_.store(n - 1);
        if (n == 1) {
            *why = "fake cudaMemcpyAsync refused";
            return XFER_ERROR_BACKEND;
        }
    }
    static_cast<FakeStream *>(stream)->copy(dst, src, bytes);
    return XFER_SUCCESS;
}

xfer_status FakeDeviceQueue::health(void *stream, std::string *why) noexcept {
    health_calls_.fetch_add(1);
    if (stream == forbidden_.load()) {
        forbidden_calls_.fetch_add(1); // never dereferenced: the stream is gone
        return XFER_SUCCESS;
    }
    if (static_cast<FakeStream *>(stream)->failed()) {
        *why = "fake sticky fault";
        return XFER_ERROR_BACKEND;
    }
    return XFER_SUCCESS;
}

bool FakeDeviceQueue::idle(void *stream) noexcept {
    idle_calls_.fetch_add(1);
    const bool idle = static_cast<FakeStream *>(stream)->idle();
    idle_answers_.fetch_add(idle ? 1 : 0);
    return idle;
}

FakeWords::FakeWords(std::size_t count) : storage_(count, 0) {}

std::vector<FlagWord> FakeWords::words() const {
    std::vector<FlagWord> out(storage_.size());
    for (std::size_t i = 0; i < storage_.size(); ++i) {
        auto *w = const_cast<std::uint32_t *>(&storage_[i]);
        out[i].host = w;
        out[i].device = reinterpret_cast<std::uint64_t>(w);
    }
    return out;
}

} // namespace xfer::test

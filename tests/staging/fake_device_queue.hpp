// SPDX-License-Identifier: Apache-2.0
// A device queue without a device, for the staging pipeline's tests: each FakeStream is a host
// thread that runs its operations in order as a CUDA stream would (a wait spins until its word
// reaches the value, a write stores it, a copy is a memcpy), and that a test can hold at a
// point (as a blocking host function would), make fail (as a sticky fault would), or make
// refuse a queued copy (as a failing cudaMemcpyAsync would).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "staging_pipeline.hpp"

namespace xfer::test {

class FakeStream {
  public:
    FakeStream();
    ~FakeStream();
    FakeStream(const FakeStream &) = delete;
    FakeStream &operator=(const FakeStream &) = delete;

    void *handle() { return this; }

    // Work a test queues itself: a hold (the stream stops there until release()), a copy.
    void hold();
    void release();
    void copy(void *dst, const void *src, std::size_t bytes);

    // Stops running operations without queuing anything (unlike hold(): the stream stays idle
    // while nothing is queued), until thaw().
    void freeze();
    void thaw();
    // Nothing queued is left to run (and the stream did not fail): cudaStreamQuery's success.
    bool idle();

    // Waits until everything queued has run; false if the stream failed (never hangs then).
    bool synchronize();
    // From the next operation on, the stream runs nothing more and reports a failure.
    void fail();
    bool failed() const { return failed_.load(); }
    // Operations run so far.
    std::size_t executed() const { return executed_.load(); }

    struct Op {
        enum Kind { wait, write, copy, hold } kind = wait;
        std::uint32_t *word = nullptr;
        std::uint32_t value = 0;
        void *dst = nullptr;
        const void *src = nullptr;
        std::size_t bytes = 0;
    };
    void push(const Op &op);

  private:
    void run();

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Op> ops_;
    bool busy_ = false;
    bool stop_ = false;
    bool held_ = false;
    bool frozen_ = false;
    std::atomic<bool> failed_{false};
    std::atomic<std::size_t> executed_{0};
    std::thread thread_;
};

class FakeDeviceQueue final : public cuda::pageable::DeviceQueue {
  public:
    xfer_status flags(void *stream, const cuda::pageable::FlagOp *ops, std::size_t count,
                      std::string *why) noexcept override;
    xfer_status copy(void *stream, void *dst, const void *src, std::size_t bytes, cuda::pageable::Way way,
                     std::string *why) noexcept override;
    xfer_status health(void *stream, std::string *why) noexcept override;
    bool idle(void *stream) noexcept override;

    // The n-th copy queued from now on (1 = the next) is refused.
    void refuse_copy(std::size_t n) { refuse_in_.store(n); }
    std::size_t copies() const { return copies_.load(); }
    // health() calls so far; and those about `stream` after forbid(stream) (it was destroyed).
    std::size_t health_calls() const { return health_calls_.load(); }
    // idle() calls so far, and those that answered true.
    std::size_t idle_calls() const { return idle_calls_.load(); }
    std::size_t idle_answers() const { return idle_answers_.load(); }
    void forbid(void *stream) { forbidden_.store(stream); }
    std::size_t forbidden_calls() const { return forbidden_calls_.load(); }

  private:
    std::atomic<std::size_t> health_calls_{0};
    std::atomic<std::size_t> idle_calls_{0};
    std::atomic<std::size_t> idle_answers_{0};
    std::atomic<void *> forbidden_{nullptr};
    std::atomic<std::size_t> forbidden_calls_{0};
    std::atomic<std::size_t> refuse_in_{0};
    std::atomic<std::size_t> copies_{0};
};

// Flag words in ordinary memory; `device` holds the host address, which the fake streams use.
class FakeWords {
  public:
    explicit FakeWords(std::size_t count);
    std::vector<cuda::pageable::FlagWord> words() const;

  private:
    std::vector<std::uint32_t> storage_;
};

} // namespace xfer::test

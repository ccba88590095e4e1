// SPDX-License-Identifier: Apache-2.0
// A host-backend stream: an in-order queue of tasks served by its own worker thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include <xfer/xfer_backend.h>

namespace xfer::host {

class HostStream {
  public:
    // Starts the worker thread; throws std::system_error if the OS refuses a thread.
    HostStream();
    // Runs every queued task, then stops and joins the worker.
    ~HostStream();
    HostStream(const HostStream &) = delete;
    HostStream &operator=(const HostStream &) = delete;

    // Appends a task and returns at once; throws std::bad_alloc (nothing queued then).
    // `on_finished` (optional) runs on the worker under the stream's lock, at the very moment
    // the task counts as finished: an event recorded last on the stream completes together
    // with the stream going idle, so neither can be seen without the other (as with CUDA).
    void enqueue(std::function<void()> task, std::function<void()> on_finished = {});

    // Blocks until every task queued so far has run. Returns XFER_ERROR_BACKEND (with the
    // message reported) if a task threw since the last synchronisation, else XFER_SUCCESS.
    xfer_status synchronize();

    // True when nothing is queued or running.
    bool idle();

    // True on the stream's own worker thread, i.e. inside a host function queued on it:
    // waiting for the stream there would wait for itself.
    bool is_worker_thread() const noexcept { return std::this_thread::get_id() == worker_.get_id(); }

  private:
    void serve();

    std::mutex mutex_;
    std::condition_variable work_ready_;
    std::condition_variable drained_;
    struct Task {
        std::function<void()> run;
        std::function<void()> on_finished; // must not throw
    };
    std::deque<Task> queue_;
    std::size_t unfinished_ = 0; // queued + running
    bool stopping_ = false;
    // First failure of a task since the last synchronize(); surfaces there, as CUDA does with
    // asynchronous errors.
    bool task_failed_ = false;
    std::string task_failure_;
    std::thread worker_; // last member: starts once everything it uses exists
};

// The streams of one context, for the calls that wait for all of its queued work
// (xfer_unregister, as cudaDeviceSynchronize does on the CUDA backends).
class HostStreams {
  public:
    void add(HostStream *s); // throws std::bad_alloc (nothing added then)
    void remove(HostStream *s) noexcept;
    // Blocks until the work queued so far on every stream of the set has run. Failures of that
    // work stay for the streams' own synchronisation. Reports and returns
    // XFER_ERROR_INVALID_STATE (waiting for nothing) when called on one of these streams'
    // workers, i.e. from a host function, which would wait for itself.
    xfer_status drain(const char *operation);

  private:
    std::mutex mutex_;
    std::unordered_set<HostStream *> streams_;
};

} // namespace xfer::host

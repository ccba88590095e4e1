// SPDX-License-Identifier: Apache-2.0
#include "host_stream.hpp"

#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include "host_event.hpp"
#include <xfer_plugin/errors.hpp>

namespace xfer::host {
namespace {
// What a throwing host function said, kept for the next synchronize(); "" if even that text
// cannot be allocated (the report then says "a non-standard exception").
std::string exception_text(const std::exception &e) noexcept {
    try {
        return std::string("unexpected exception: ") + e.what();
    } catch (...) {
        return {};
    }
}
} // namespace

HostStream::HostStream() : worker_([this] { serve(); }) {}

HostStream::~HostStream() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    work_ready_.notify_one();
    // The worker drains the queue before it leaves, so destroying never drops queued work.
    // join() only throws for a self-join, which stream_destroy refuses before getting here;
    // the catch keeps a destructor from ending the process all the same.
    try {
        if (worker_.joinable()) {
            worker_.join();
        }
    } catch (...) {
        worker_.detach();
    }
}

void HostStream::enqueue(std::function<void()> task, std::function<void()> on_finished) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(Task{std::move(task), std::move(on_finished)});
        ++unfinished_;
    }
    work_ready_.notify_one();
}

xfer_status HostStream::synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    drained_.wait(lock, [this] { return unfinished_ == 0; });
    if (!task_failed_) {
        return XFER_SUCCESS;
    }
    std::string failure = std::move(task_failure_);
    task_failure_.clear();
    task_failed_ = false;
    lock.unlock();
    return plugin::fail(XFER_ERROR_BACKEND, "host: a host function queued on this stream threw: %s",
                        failure.empty() ? "a non-standard exception" : failure.c_str());
}

bool HostStream::idle() {
    std::lock_guard<std::mutex> lock(mutex_);
    return unfinished_ == 0;
}

void HostStream::serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) {
            return; // stopping, and nothing left to run
        }
        Task task = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        // The worker must outlive any task: a throwing user host function is recorded for the
        // next synchronize(), never allowed to end the thread (std::terminate).
        bool failed = false;
        std::string failure;
        try {
            if (task.run) task.run();
        } catch (const std::exception &e) {
            failed = true;
            failure = exception_text(e);
        } catch (...) {
            failed = true;
        }
        // Destroy the task (and the storage references it holds) before reporting completion,
        // so a synchronised caller sees memory of freed buffers already released.
        task.run = nullptr;
        lock.lock();
        if (failed && !task_failed_) {
            task_failed_ = true;
            task_failure_ = std::move(failure);
        }
        if (task.on_finished) task.on_finished();
        if (--unfinished_ == 0) {
            drained_.notify_all();
        }
    }
}

void HostStreams::add(HostStream *s) {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.insert(s);
}

void HostStreams::remove(HostStream *s) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(s);
}

xfer_status HostStreams::drain(const char *operation) {
    std::vector<std::shared_ptr<EventMarker>> markers;
    {
        // Markers are queued under the lock, so no stream of the set is destroyed meanwhile; a
        // stream destroyed after it still runs its queue, marker included, before it goes.
        std::lock_guard<std::mutex> lock(mutex_);
        for (HostStream *s : streams_) {
            if (s->is_worker_thread()) {
                return plugin::fail(XFER_ERROR_INVALID_STATE,
                                    "%s: called from a host function running on a stream of this context, which "
                                    "would wait for itself (host functions must not call xfer functions)",
                                    operation);
            }
        }
        markers.reserve(streams_.size());
        for (HostStream *s : streams_) {
            auto marker = std::make_shared<EventMarker>();
            s->enqueue(nullptr, [marker] { marker->complete(); });
            markers.push_back(std::move(marker));
        }
    }
    for (const std::shared_ptr<EventMarker> &marker : markers) {
        marker->wait();
    }
    return XFER_SUCCESS;
}

} // namespace xfer::host

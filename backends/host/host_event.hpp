// SPDX-License-Identifier: Apache-2.0
// A host-backend event. Each record creates a new marker that the stream's worker completes
// when it reaches it; the event points at its latest marker, so re-recording moves the event
// while waits queued earlier keep waiting for the record they saw (as cudaStreamWaitEvent does).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace xfer::host {

class EventMarker {
  public:
    using clock = std::chrono::steady_clock;

    // Called by the worker when it reaches the marker: stamps the time, wakes waiters.
    void complete();
    void wait();
    bool is_complete();
    // Completion time; meaningful once is_complete().
    clock::time_point completion_time();

  private:
    std::mutex mutex_;
    std::condition_variable completed_;
    bool complete_ = false;
    clock::time_point time_{};
};

class HostEvent {
  public:
    // The marker of the latest record; null if the event was never recorded.
    std::shared_ptr<EventMarker> latest();
    void set_latest(std::shared_ptr<EventMarker> marker);

  private:
    std::mutex mutex_;
    std::shared_ptr<EventMarker> latest_;
};

} // namespace xfer::host

// SPDX-License-Identifier: Apache-2.0
#include "host_event.hpp"

#include <utility>

namespace xfer::host {

void EventMarker::complete() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        time_ = clock::now();
        complete_ = true;
    }
    completed_.notify_all();
}

void EventMarker::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    completed_.wait(lock, [this] { return complete_; });
}

bool EventMarker::is_complete() {
    std::lock_guard<std::mutex> lock(mutex_);
    return complete_;
}

EventMarker::clock::time_point EventMarker::completion_time() {
    std::lock_guard<std::mutex> lock(mutex_);
    return time_;
}

std::shared_ptr<EventMarker> HostEvent::latest() {
    std::lock_guard<std::mutex> lock(mutex_);
    return latest_;
}

void HostEvent::set_latest(std::shared_ptr<EventMarker> marker) {
    std::lock_guard<std::mutex> lock(mutex_);
    latest_ = std::move(marker);
}

} // namespace xfer::host

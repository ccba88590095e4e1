// SPDX-License-Identifier: Apache-2.0
#include "host_gate.hpp"

#include <thread>

namespace xfer::test::contract {

xfer_status HostGate::block(xfer_stream s) { return xfer_stream_launch_host_func(s, &HostGate::wait_here, this); }

void HostGate::open() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
    }
    changed_.notify_all();
}

bool HostGate::reached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return reached_;
}

bool HostGate::timed_out() {
    std::lock_guard<std::mutex> lock(mutex_);
    return timed_out_;
}

void HostGate::wait_here(void *self) {
    auto *gate = static_cast<HostGate *>(self);
    std::unique_lock<std::mutex> lock(gate->mutex_);
    gate->reached_ = true;
    gate->changed_.notify_all();
    if (!gate->changed_.wait_for(lock, limit, [gate] { return gate->open_; })) {
        gate->timed_out_ = true;
    }
}

void sleep_ms_host_fn(void *ms) { std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<int *>(ms))); }

} // namespace xfer::test::contract

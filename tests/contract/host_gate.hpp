// SPDX-License-Identifier: Apache-2.0
// Host functions for stream tests: a gate that holds a stream until the test opens it, and a
// sleeper. Queued through xfer_stream_launch_host_func, so they work on every backend (CUDA
// runs them through cudaLaunchHostFunc).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <xfer/xfer.h>

namespace xfer::test::contract {

class HostGate {
  public:
    // Queues the gate on `s`: work queued after it waits until open() (or until `limit` passes,
    // so a broken backend makes a test fail instead of hang; timed_out() then says so).
    xfer_status block(xfer_stream s);
    void open();
    // True once the host function has started waiting (the stream has reached the gate).
    bool reached();
    bool timed_out();

    static constexpr std::chrono::seconds limit{30};

  private:
    static void wait_here(void *self);

    std::mutex mutex_;
    std::condition_variable changed_;
    bool open_ = false;
    bool reached_ = false;
    bool timed_out_ = false;
};

// A host function that sleeps `*static_cast<int *>(ms)` milliseconds.
void sleep_ms_host_fn(void *ms);

} // namespace xfer::test::contract

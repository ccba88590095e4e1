// SPDX-License-Identifier: Apache-2.0
// The raw call a user writes without xfer to copy a buffer, on the same memory and a stream
// of their own: what `bandwidth` measures xfer_copy_async against. Picked by what the backend
// is (its device kind and caps), not by its name:
//   CUDA, copies        -> cudaMemcpyAsync between the device view and the host view
//   CUDA, migrates      -> cudaMemPrefetchAsync of the range (CUDA 13 cudaMemLocation form)
//   host device         -> std::memcpy between the two views on the calling thread (the raw
//                          equivalent of the emulated device's copy)
//   no copy (zero-copy) -> none: nothing moves, so there is nothing to compare
#pragma once

#include <cstdint>
#include <string>

#include "testbed.hpp"
#include "verify.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {

enum class RawCall { none, cuda_memcpy_async, cuda_prefetch_async, host_memcpy };

RawCall raw_call_for(const Testbed &s);

// What is measured, for report notes ("cudaMemcpyAsync(device view <-> host view), own stream").
std::string raw_call_text(RawCall call);

// Times raw work as timed_raw_copy does: for the CUDA calls, `queue()` queues them on
// xfer_stream_native(raw_stream) between a span's events and the time is the events'; for
// host_memcpy, `queue()` does the work on this thread, timed with steady_clock. Waits; traced
// under `name` and `category`. Returns milliseconds.
template <class Queue>
double time_raw(Testbed &s, RawCall call, const Stream &raw_stream, const std::string &name, const char *category,
                std::uint64_t bytes, Queue queue) {
    if (call == RawCall::host_memcpy) {
        const Clock::time_point t0 = Clock::now();
        queue();
        const Clock::time_point t1 = Clock::now();
        s.timeline().host_span(name, category, t0, t1, bytes);
        return ms_between(t0, t1);
    }
    return time_on_stream(s, raw_stream, name, category, bytes, queue);
}

// Copies the whole buffer in `dir` the raw way, waits, and returns its time in ms. CUDA calls
// are queued on xfer_stream_native(raw_stream) between the timeline's events (the same kind
// of event pair as the xfer call's); the host memcpy runs on this thread, timed with
// steady_clock. Both are traced under `name`. Throws XferError naming the failing call.
double timed_raw_copy(Testbed &s, RawCall call, const Buffer &buf, xfer_direction dir, const Stream &raw_stream,
                      const std::string &name);

// Proves, untimed, that the raw calls move the bytes the right way: the device view is cleared
// through xfer, the host view filled from `seed`, raw H2D, host view cleared, raw D2H; the
// host view must then hold the seed's bytes. Only where raw calls copy between two views (a
// prefetch moves pages, not values). Leaves both views holding the seed's bytes.
void verify_raw_copies(Testbed &s, RawCall call, const Buffer &buf, const Stream &raw_stream, std::uint64_t seed,
                       Verifier &verifier, const std::string &what);

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// The per-copy choice for a copy between pageable (user) host memory and device memory that no
// registration covers yet: the driver's copy, the staging engine, or page-locking the range
// (cudaHostRegister) now or in the background. Pure: it reads the cost model and the copy's
// history and returns a decision; the registration cache carries it out.
//
// The rule, with times from this machine's calibration (cost_model.hpp):
//   - the fastest way without page-locking: the staging engine from the staged crossover up
//     (where the backend has one), the driver below it;
//   - page-lock now when doing so and copying as DMA beats that way for this very copy
//     (cudaHostRegister + DMA < the unregistered way: where the driver's pageable copy is the
//     alternative, a large copy page-locked first is faster; measured: docs/performance.md);
//   - a range copied again (reuse within the tracker's window): where a staging engine serves
//     the copies meanwhile, page-lock it in the background once the host time the copies seen
//     spent staging exceeds what the registration costs, so that the copies after it are DMAs
//     and this one is not held up; elsewhere page-lock it by this copy once the time the copies
//     seen lost to the unregistered way exceeds the registration's cost (rent or buy);
//   - never on first sight when it does not pay for that copy alone: a one-off copy never pays
//     for a registration;
//   - an xfer buffer's host view: a buffer copied a second time is one a program copies again
//     and again (a buffer copied once is filling its device view), and its pages are its own
//     until xfer_free (no page to look up, no proof). From buffer_registration_min up, its second
//     copy asks for the registration in the background (the copies meanwhile go the
//     unregistered way); it is released with the buffer.
// Without a calibration the declared defaults decide: the staged crossovers, and on a backend that registers on first use (pinned) every copy from
// registration_min up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cost_model.hpp"
#include <xfer/xfer.h>

namespace xfer::cuda::user_memory {

// The `path` parameter: the fastest measured way, or one way forced.
enum class PathOverride : std::uint8_t { automatic = 0, driver = 1, staged = 2, registered = 3 };

// What decides, fixed when the context opens.
struct PolicySettings {
    const CostModel *model = nullptr; // the calibration; nullptr: the declared defaults decide
    PathOverride path = PathOverride::automatic;
    bool can_stage = false;             // the backend has a staging engine (pageable)
    bool register_first_use = false;    // without a calibration: page-lock every range from registration_min up
    std::size_t staged_min[2] = {0, 0}; // [0: to the device, 1: to the host]: the staged crossovers
    std::size_t registration_min = 0;   // smaller copies are never page-locked nor tracked
    // The same for copies of an xfer buffer's host view (with a calibration only): no tracking
    // cost to cover, so from where a registration pays back within kPaybackCopies copies.
    std::size_t buffer_registration_min = 0;
};

// Whether the range can be page-locked at all.
enum class Registrable : std::uint8_t {
    yes = 0,
    over_limit = 1, // more than pin_limit (or RLIMIT_MEMLOCK) allows, even with every other range evicted
    refused = 2,    // the driver refused it before, or the pages' identity cannot be proven here
};

enum class Choice : std::uint8_t {
    driver = 0,       // cudaMemcpyAsync of pageable memory
    staged = 1,       // the staging engine
    register_now = 2, // cudaHostRegister, then the copy as DMA
};

struct Decision {
    Choice choice = Choice::driver;
    xfer_path_reason reason = XFER_REASON_NO_FASTER_PATH;
    // The range is to be page-locked by the background registrar (choice is staged or driver):
    // decide() asks for it; the registration cache's plan also says so while it is pending.
    bool register_in_background = false;
};

// The fastest way that page-locks nothing: the staging engine from the staged crossover up
// (where the backend has one), the driver below it.
Choice unregistered_way(const PolicySettings &s, std::uint64_t bytes, xfer_direction dir) noexcept;

// `copies_seen`: copies of this range within the window, this one included (1 when untracked).
// `buffer_view`: the range is (part of) an xfer buffer's host view.
Decision decide(const PolicySettings &s, std::uint64_t bytes, xfer_direction dir, unsigned copies_seen,
                Registrable registrable, bool buffer_view = false) noexcept;

// The smallest copy that decide() may page-lock (outside path = registered).
std::size_t smallest_registered(const PolicySettings &s, bool buffer_view) noexcept;

} // namespace xfer::cuda::user_memory

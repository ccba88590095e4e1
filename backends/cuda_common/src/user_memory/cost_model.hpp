// SPDX-License-Identifier: Apache-2.0
// What copies of user (pageable) memory cost on this machine: the curves a calibration measured
// (calibration_measure.cpp), kept per GPU and driver (calibration_file.hpp), and what follows
// from them: the size from which the staging engine beats the driver, the size from which a
// registration can pay for itself. Pure arithmetic: no CUDA, unit-tested without a device.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <xfer/xfer.h>

namespace xfer::cuda::user_memory {

// The ways a copy between host and device memory can move whose time depends on its size.
enum class Way : int {
    dma = 0,    // page-locked memory (cudaHostAlloc, or registered): the copy engine's DMA
    driver = 1, // cudaMemcpyAsync of pageable memory: the driver's own staging
    staged = 2, // the pageable backend's staging engine
};
constexpr int kWays = 3;
const char *way_name(Way w) noexcept; // "dma", "driver", "staged"

// Seconds a copy of `bytes` takes, measured at a few sizes: linear between two measured sizes,
// at the first point's time below the first (a copy never costs less than the smallest one
// measured) and at the last segment's rate beyond the last.
class Curve {
  public:
    struct Point {
        std::uint64_t bytes = 0;
        double seconds = 0.0;
    };
    void add(std::uint64_t bytes, double seconds); // keeps the points sorted; a size again replaces it
    bool empty() const noexcept { return points_.empty(); }
    const std::vector<Point> &points() const noexcept { return points_; }
    double seconds(std::uint64_t bytes) const noexcept; // +infinity when empty

  private:
    std::vector<Point> points_;
};

// A linear cost: per call plus per byte (cudaHostRegister, cudaHostUnregister).
struct LinearCost {
    double call_seconds = 0.0;
    double byte_seconds = 0.0;
    double seconds(std::uint64_t bytes) const noexcept { return call_seconds + byte_seconds * double(bytes); }
};

struct CostModel {
    Curve curves[kWays][2]; // [way][0: to the device, 1: to the host]
    LinearCost register_cost;
    LinearCost unregister_cost;
    double fill_bytes_per_second = 0.0; // one thread's memcpy into page-locked memory
    double track_seconds = 0.0;         // the bookkeeping of a tracked copy: one page's frame read from pagemap

    Curve &curve(Way w, xfer_direction d) noexcept { return curves[int(w)][d == XFER_TO_DEVICE ? 0 : 1]; }
    const Curve &curve(Way w, xfer_direction d) const noexcept { return curves[int(w)][d == XFER_TO_DEVICE ? 0 : 1]; }
    double seconds(Way w, xfer_direction d, std::uint64_t bytes) const noexcept { return curve(w, d).seconds(bytes); }
    // Page-locking a range and, later, unlocking it.
    double registration_seconds(std::uint64_t bytes) const noexcept {
        return register_cost.seconds(bytes) + unregister_cost.seconds(bytes);
    }
    // Host (CPU) time a staged copy spends moving bytes between the user's memory and the
    // arena, summed over the workers: what a registration saves the host on each later copy.
    double staged_host_seconds(std::uint64_t bytes) const noexcept;
    // Everything a decision needs was measured (the staging curves only where `staged`).
    bool complete(bool staged) const noexcept;

    // The smallest size from which the staging engine is faster than the driver by kStagedMargin
    // in direction `d` and stays so at every larger size measured, rounded up to a page; nullopt
    // when it never is (or the staging curves were not measured).
    std::optional<std::uint64_t> staged_crossover(xfer_direction d) const;
    // The smallest size (rounded up to a page) at which a registration pays for itself within
    // kPaybackCopies copies in direction `d` against the best unregistered way (the driver, or
    // the staging engine where `staged`), and the bookkeeping of tracking a copy costs at most
    // kTrackingShare of it: below it xfer does not track ranges for reuse. With `tracked` false
    // (an xfer buffer's host view: no page to look up, the buffer knows its pages) only the
    // payback counts. nullopt: never.
    std::optional<std::uint64_t> registration_min(xfer_direction d, bool staged, bool tracked = true) const;
    // A range must pay back its registration within this many copies: beyond that, the
    // bookkeeping of every small copy would cost more than the registrations it leads to save.
    static constexpr int kPaybackCopies = 100;
    // A copy that is tracked for reuse but copied once loses its bookkeeping: kept within 1% of
    // the copy, below the run-to-run spread of any copy measured.
    static constexpr double kTrackingShare = 0.01;
    // Near the crossover the staging engine and the driver are within the spread of one
    // calibration's medians from another (docs/performance.md), and the driver's copy costs the
    // host no worker threads: the engine is chosen where it is measured this much faster.
    static constexpr double kStagedMargin = 0.10;
};

} // namespace xfer::cuda::user_memory

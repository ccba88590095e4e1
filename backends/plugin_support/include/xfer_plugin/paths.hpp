// SPDX-License-Identifier: Apache-2.0
// How a plugin tells the core which path each copy takes and what it page-locked (the core's
// take_path, note_registration and path_refused services, xfer_backend.h). Every copy entry calls take_path
// for each piece before queuing it; an older core without the services gets nothing and every
// path is allowed.
#pragma once

#include <chrono>
#include <cstdint>

#include <xfer/xfer_backend.h>

namespace xfer::plugin {

// core->take_path(path, reason, copies, bytes, largest_piece) when the core has it, else
// XFER_SUCCESS. XFER_ERROR_SLOW_PATH (message set) means: queue nothing, return it.
xfer_status take_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t copies, std::uint64_t bytes,
                      std::uint64_t largest_piece) noexcept;

// One piece of `bytes`.
inline xfer_status take_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t bytes) noexcept {
    return take_path(path, reason, 1, bytes, bytes);
}

// core->note_registration when the core has it.
void note_registration(bool unlocked, std::uint64_t bytes, std::uint64_t ns) noexcept;

// core->path_refused when the core has it, else false: whether take_path would refuse the path.
// Asked before a step that changes state on the way to the path (a registration).
bool path_refused(xfer_copy_path path, xfer_path_reason reason, std::uint64_t largest_piece) noexcept;

// The host time of one registration or unregistration, for note_registration.
class HostTimer {
  public:
    HostTimer() noexcept : start_(std::chrono::steady_clock::now()) {}
    std::uint64_t ns() const noexcept {
        return static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count());
    }

  private:
    std::chrono::steady_clock::time_point start_;
};

// Counts the pieces of a batch per path and reason, then reports them all with one take_path
// call each (before anything of the batch is queued).
class PathTally {
  public:
    void add(xfer_copy_path path, xfer_path_reason reason, std::uint64_t bytes) noexcept {
        Cell &c = cells_[index(path, reason)];
        c.copies += 1;
        c.bytes += bytes;
        if (bytes > c.largest) c.largest = bytes;
    }
    // take_path for every cell with pieces; the first refusal is returned.
    xfer_status take_all() const noexcept;

  private:
    static constexpr int kCells = XFER_PATH_COUNT * XFER_REASON_COUNT;
    static int index(xfer_copy_path p, xfer_path_reason r) noexcept {
        return static_cast<int>(p) * XFER_REASON_COUNT + static_cast<int>(r);
    }
    struct Cell {
        std::uint64_t copies = 0, bytes = 0, largest = 0;
    };
    Cell cells_[kCells];
};

} // namespace xfer::plugin

// SPDX-License-Identifier: Apache-2.0
#include "xfer_plugin/paths.hpp"

#include <cstddef>

#include "core_services.hpp"

namespace xfer::plugin {

xfer_status take_path(xfer_copy_path path, xfer_path_reason reason, std::uint64_t copies, std::uint64_t bytes,
                      std::uint64_t largest_piece) noexcept {
    const xfer_core_services *core = core_services();
    // An older core hands a smaller services struct: only call what it really has.
    if (core == nullptr || core->struct_size < offsetof(xfer_core_services, take_path) + sizeof core->take_path ||
        core->take_path == nullptr) {
        return XFER_SUCCESS;
    }
    return core->take_path(path, reason, copies, bytes, largest_piece);
}

void note_registration(bool unlocked, std::uint64_t bytes, std::uint64_t ns) noexcept {
    const xfer_core_services *core = core_services();
    if (core == nullptr ||
        core->struct_size < offsetof(xfer_core_services, note_registration) + sizeof core->note_registration ||
        core->note_registration == nullptr) {
        return;
    }
    core->note_registration(unlocked ? 1 : 0, bytes, ns);
}

bool path_refused(xfer_copy_path path, xfer_path_reason reason, std::uint64_t largest_piece) noexcept {
    const xfer_core_services *core = core_services();
    if (core == nullptr || core->struct_size < offsetof(xfer_core_services, path_refused) + sizeof core->path_refused ||
        core->path_refused == nullptr) {
        return false;
    }
    return core->path_refused(path, reason, largest_piece) != 0;
}

xfer_status PathTally::take_all() const noexcept {
    for (int i = 0; i < kCells; ++i) {
        const Cell &c = cells_[i];
        if (c.copies == 0) continue;
        const auto path = static_cast<xfer_copy_path>(i / XFER_REASON_COUNT);
        const auto reason = static_cast<xfer_path_reason>(i % XFER_REASON_COUNT);
        if (xfer_status st = take_path(path, reason, c.copies, c.bytes, c.largest)) return st;
    }
    return XFER_SUCCESS;
}

} // namespace xfer::plugin

// SPDX-License-Identifier: Apache-2.0
#include "copy_ranges.hpp"

#include <string>
#include <utility>

#include "error.hpp"

namespace xfer::core {

namespace {
std::string entry_of(long long index) { return index < 0 ? std::string() : msg("entry ", index, ": "); }
} // namespace

void raise_impossible_ranges(const char *function, long long index, const void *dst, const void *src,
                             std::size_t bytes) {
    const std::string entry = entry_of(index);
    if (bytes > kMaxObject) {
        raise(XFER_ERROR_INVALID_SIZE, function, ": ", entry, bytes, " bytes exceeds the largest possible object (",
              kMaxObject, " bytes)");
    }
    for (const auto &[name, p] : {std::pair<const char *, const void *>{"dst", dst}, {"src", src}}) {
        if (wraps(p, bytes)) {
            raise(XFER_ERROR_INVALID_SIZE, function, ": ", entry, name, " ", p, " + ", bytes,
                  " bytes wraps around the end of the address space");
        }
    }
    raise(XFER_ERROR_INTERNAL, function, ": ", entry, "ranges refused without a reason");
}

void raise_overlapping_ranges(const char *function, long long index, const void *dst, const void *src,
                              std::size_t bytes) {
    const std::string entry = entry_of(index);
    const auto d = reinterpret_cast<std::uintptr_t>(dst);
    const auto s = reinterpret_cast<std::uintptr_t>(src);
    const std::uintptr_t shared = d < s ? d + bytes - s : s + bytes - d;
    raise(XFER_ERROR_INVALID_ARGUMENT, function, ": ", entry, "dst ", dst, " and src ", src, " overlap (", shared,
          " of the ", bytes,
          " bytes are in both ranges); a copy between overlapping ranges is undefined, copy "
          "through a separate buffer");
}

} // namespace xfer::core

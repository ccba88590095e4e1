// SPDX-License-Identifier: Apache-2.0
#include "registration_lru.hpp"

#include <algorithm>
#include <iterator>

namespace xfer::cuda::user_memory {

CachedRange *RegistrationLru::find(std::uintptr_t start, std::size_t bytes) noexcept {
    auto it = ranges_.upper_bound(start); // first range starting after `start`
    if (it == ranges_.begin()) {
        return nullptr;
    }
    CachedRange &r = std::prev(it)->second;
    return start + bytes <= r.start + r.bytes ? &r : nullptr;
}

std::vector<std::uintptr_t> RegistrationLru::overlapping(std::uintptr_t start, std::size_t bytes) const {
    std::vector<std::uintptr_t> out;
    auto it = ranges_.lower_bound(start);
    if (it != ranges_.begin() && std::prev(it)->second.start + std::prev(it)->second.bytes > start) {
        out.push_back(std::prev(it)->first);
    }
    for (; it != ranges_.end() && it->first < start + bytes; ++it) {
        out.push_back(it->first);
    }
    return out;
}

bool RegistrationLru::victims_for(std::size_t bytes, std::vector<std::uintptr_t> *out) const {
    out->clear();
    if (bytes > limit_) {
        return false;
    }
    std::vector<const CachedRange *> by_age;
    for (const auto &entry : ranges_) {
        by_age.push_back(&entry.second);
    }
    std::sort(by_age.begin(), by_age.end(),
              [](const CachedRange *a, const CachedRange *b) { return a->last_use < b->last_use; });
    std::size_t held = bytes_;
    for (const CachedRange *r : by_age) {
        if (held + bytes <= limit_) {
            break;
        }
        out->push_back(r->start);
        held -= r->bytes;
    }
    return true;
}

void RegistrationLru::insert(CachedRange r) {
    r.last_use = ++clock_;
    bytes_ += r.bytes;
    const std::uintptr_t start = r.start;
    ranges_.emplace(start, std::move(r));
}

CachedRange RegistrationLru::take(std::uintptr_t start) {
    auto it = ranges_.find(start);
    CachedRange r = std::move(it->second);
    ranges_.erase(it);
    bytes_ -= r.bytes;
    return r;
}

std::vector<std::uintptr_t> RegistrationLru::all() const {
    std::vector<std::uintptr_t> out;
    for (const auto &entry : ranges_) {
        out.push_back(entry.first);
    }
    return out;
}

} // namespace xfer::cuda::user_memory

// SPDX-License-Identifier: Apache-2.0
#include "cost_model.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace xfer::cuda::user_memory {
namespace {

constexpr std::uint64_t kPage = 4096;

std::uint64_t page_up(std::uint64_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// The smallest size in [lo, hi] for which `better(size)` holds, given better(hi) and
// !better(lo): geometric bisection to within 1/64 of the size, then rounded up to a page.
std::uint64_t first_better(std::uint64_t lo, std::uint64_t hi, const std::function<bool(std::uint64_t)> &better) {
    while (hi - lo > std::max<std::uint64_t>(kPage, lo / 64)) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        (better(mid) ? hi : lo) = mid;
    }
    return page_up(hi);
}

// The smallest size from which `better` holds at every measured size of `sizes` above it (and
// at the largest); nullopt when it does not hold at the largest size.
std::optional<std::uint64_t> crossover(const std::vector<std::uint64_t> &sizes,
                                       const std::function<bool(std::uint64_t)> &better) {
    if (sizes.empty() || !better(sizes.back())) return std::nullopt;
    std::size_t i = sizes.size() - 1;
    while (i > 0 && better(sizes[i - 1])) --i;
    if (i == 0) return page_up(sizes[0] > kPage ? kPage : sizes[0]); // better at every size measured
    return first_better(sizes[i - 1], sizes[i], better);
}

std::vector<std::uint64_t> sizes_of(const Curve &a, const Curve &b) {
    std::vector<std::uint64_t> sizes;
    for (const Curve::Point &p : a.points()) sizes.push_back(p.bytes);
    for (const Curve::Point &p : b.points()) sizes.push_back(p.bytes);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

} // namespace

const char *way_name(Way w) noexcept {
    switch (w) {
    case Way::dma:
        return "dma";
    case Way::driver:
        return "driver";
    default:
        return "staged";
    }
}

void Curve::add(std::uint64_t bytes, double seconds) {
    auto at = std::lower_bound(points_.begin(), points_.end(), bytes,
                               [](const Point &p, std::uint64_t b) { return p.bytes < b; });
    if (at != points_.end() && at->bytes == bytes) {
        at->seconds = seconds;
        return;
    }
    points_.insert(at, Point{bytes, seconds});
}

double Curve::seconds(std::uint64_t bytes) const noexcept {
    if (points_.empty()) return std::numeric_limits<double>::infinity();
    if (bytes <= points_.front().bytes) return points_.front().seconds;
    if (points_.size() == 1) return points_.front().seconds * double(bytes) / double(points_.front().bytes);
    auto hi = std::lower_bound(points_.begin(), points_.end(), bytes,
                               [](const Point &p, std::uint64_t b) { return p.bytes < b; });
    if (hi == points_.end()) hi = points_.end() - 1; // beyond the last: the last segment's rate
    const Point &b = *hi;
    const Point &a = *(hi - 1);
    const double slope = (b.seconds - a.seconds) / double(b.bytes - a.bytes);
    return std::max(0.0, a.seconds + slope * (double(bytes) - double(a.bytes)));
}

double CostModel::staged_host_seconds(std::uint64_t bytes) const noexcept {
    return fill_bytes_per_second > 0 ? double(bytes) / fill_bytes_per_second : 0.0;
}

bool CostModel::complete(bool staged) const noexcept {
    for (xfer_direction d : {XFER_TO_DEVICE, XFER_TO_HOST}) {
        if (curve(Way::dma, d).empty() || curve(Way::driver, d).empty()) return false;
        if (staged && curve(Way::staged, d).empty()) return false;
    }
    return register_cost.byte_seconds > 0 && fill_bytes_per_second > 0 && track_seconds > 0;
}

std::optional<std::uint64_t> CostModel::staged_crossover(xfer_direction d) const {
    const Curve &staged = curve(Way::staged, d);
    const Curve &driver = curve(Way::driver, d);
    if (staged.empty() || driver.empty()) return std::nullopt;
    return crossover(sizes_of(staged, driver),
                     [&](std::uint64_t b) { return staged.seconds(b) * (1.0 + kStagedMargin) < driver.seconds(b); });
}

std::optional<std::uint64_t> CostModel::registration_min(xfer_direction d, bool staged, bool tracked) const {
    const Curve &dma = curve(Way::dma, d);
    const Curve &driver = curve(Way::driver, d);
    if (dma.empty() || driver.empty()) return std::nullopt;
    const auto pays = [&](std::uint64_t b) {
        double best = driver.seconds(b);
        if (staged) best = std::min(best, seconds(Way::staged, d, b));
        if (tracked && track_seconds > kTrackingShare * best) return false;
        return registration_seconds(b) <= kPaybackCopies * (best - dma.seconds(b));
    };
    return crossover(sizes_of(dma, driver), pays);
}

} // namespace xfer::cuda::user_memory

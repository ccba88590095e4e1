// SPDX-License-Identifier: Apache-2.0
#include "verify.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "random_data.hpp"

namespace xfer::tool {

const char *to_string(Verification::State state) {
    switch (state) {
    case Verification::State::passed:
        return "passed";
    case Verification::State::failed:
        return "failed";
    case Verification::State::not_run:
        break;
    }
    return "not run";
}

bool corruption_hook_enabled() {
    const char *v = std::getenv("XFER_TOOL_CORRUPT");
    return v && *v && std::strcmp(v, "0") != 0;
}

void apply_corruption_hook(void *data, std::size_t bytes) {
    if (!corruption_hook_enabled() || bytes == 0) return;
    std::size_t at = (bytes / 2) & ~static_cast<std::size_t>(3);
    static_cast<unsigned char *>(data)[at] ^= 0xffu;
}

void Verifier::floats(const std::string &what, float *got, const float *expected, std::size_t n) {
    floats_generated(what, got, n, [expected](std::size_t i) { return expected[i]; });
}

void Verifier::bytes(const std::string &what, void *got_raw, const void *expected_raw, std::size_t n) {
    apply_corruption_hook(got_raw, n);
    const auto *got = static_cast<const unsigned char *>(got_raw);
    const auto *expected = static_cast<const unsigned char *>(expected_raw);
    if (std::memcmp(got, expected, n) == 0) {
        record_pass(what, n, "bytes");
        return;
    }
    std::size_t first = n, mismatches = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (got[i] != expected[i]) {
            if (first == n) first = i;
            ++mismatches;
        }
    record_byte_mismatch(what, first, expected[first], got[first], mismatches, n);
}

void Verifier::bytes_from_seed(const std::string &what, void *got_raw, std::size_t n, std::uint64_t seed) {
    apply_corruption_hook(got_raw, n);
    const auto *got = static_cast<const unsigned char *>(got_raw);
    // Regenerate the reference in chunks: a 1 GiB result needs no second 1 GiB copy.
    RandomData reference(seed);
    std::vector<unsigned char> chunk(std::size_t(1) << 20);
    std::size_t first = n, mismatches = 0;
    unsigned first_expected = 0;
    for (std::size_t base = 0; base < n; base += chunk.size()) {
        std::size_t len = std::min(chunk.size(), n - base);
        // Whole 8-byte draws per chunk keep the stream identical to one fill_bytes(n).
        reference.fill_bytes(chunk.data(), len);
        if (std::memcmp(got + base, chunk.data(), len) == 0) continue;
        for (std::size_t i = 0; i < len; ++i)
            if (got[base + i] != chunk[i]) {
                if (first == n) {
                    first = base + i;
                    first_expected = chunk[i];
                }
                ++mismatches;
            }
    }
    if (mismatches)
        record_byte_mismatch(what, first, first_expected, got[first], mismatches, n);
    else
        record_pass(what, n, "bytes");
}

void Verifier::record_pass(const std::string &what, std::size_t n, const char *unit) {
    result_.checked += n;
    ++checks_;
    if (result_.state == Verification::State::failed) return;
    result_.state = Verification::State::passed;
    if (std::find(names_.begin(), names_.end(), what) == names_.end()) names_.push_back(what);
    // A sweep verifies dozens of buffers: name a few, count the rest.
    std::string names;
    for (std::size_t i = 0; i < names_.size() && i < 3; ++i) names += (i ? ", " : "") + names_[i];
    if (names_.size() > 3) names += " and " + std::to_string(names_.size() - 3) + " more";
    result_.detail = (checks_ == 1 ? "" : std::to_string(checks_) + " checks, ") + std::to_string(result_.checked) +
                     " " + unit + " match (" + names + ")";
}

void Verifier::record_float_mismatch(const std::string &what, std::size_t index, float expected, float got,
                                     std::size_t mismatches, std::size_t n) {
    result_.checked += n;
    ++checks_;
    if (result_.state == Verification::State::failed) return; // keep the first failure: it is the one to debug
    char text[512];
    std::snprintf(text, sizeof text,
                  "%s: first mismatch at index %zu: expected %.9g, got %.9g (%zu of %zu elements differ)", what.c_str(),
                  index, static_cast<double>(expected), static_cast<double>(got), mismatches, n);
    result_.state = Verification::State::failed;
    result_.detail = text;
}

void Verifier::record_byte_mismatch(const std::string &what, std::size_t index, unsigned expected, unsigned got,
                                    std::size_t mismatches, std::size_t n) {
    result_.checked += n;
    ++checks_;
    if (result_.state == Verification::State::failed) return;
    char text[512];
    std::snprintf(text, sizeof text,
                  "%s: first mismatch at byte %zu: expected 0x%02x, got 0x%02x (%zu of %zu bytes differ)", what.c_str(),
                  index, expected, got, mismatches, n);
    result_.state = Verification::State::failed;
    result_.detail = text;
}

} // namespace xfer::tool

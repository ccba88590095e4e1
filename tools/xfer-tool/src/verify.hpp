// SPDX-License-Identifier: Apache-2.0
// Verification of workflow results against host-computed references.
//
// Test hook: with XFER_TOOL_CORRUPT set (to anything but "0") every check first flips one byte
// of the result in the middle of it, so CI proves that a wrong result is reported as a failed
// verification (non-zero exit, first mismatching index and values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace xfer::tool {

struct Verification {
    enum class State { not_run, passed, failed };
    State state = State::not_run;
    std::string detail;        // passed: what was compared; failed: the first mismatch
    std::uint64_t checked = 0; // elements (or bytes) compared
};

const char *to_string(Verification::State state);

bool corruption_hook_enabled();
// Flips byte (bytes / 2) rounded down to a multiple of 4 (the low mantissa byte of a float,
// so the value stays finite and differs) when the hook is enabled.
void apply_corruption_hook(void *data, std::size_t bytes);

class Verifier {
  public:
    // got[i] must equal expected[i] exactly: the device kernels and the host references use
    // the same correctly rounded single operations.
    void floats(const std::string &what, float *got, const float *expected, std::size_t n);

    // expected_at(i) gives the reference of element i (references too large to keep).
    template <class ExpectedAt>
    void floats_generated(const std::string &what, float *got, std::size_t n, ExpectedAt expected_at);

    void bytes(const std::string &what, void *got, const void *expected, std::size_t n);
    // got must equal RandomData(seed).fill_bytes of n bytes.
    void bytes_from_seed(const std::string &what, void *got, std::size_t n, std::uint64_t seed);

    const Verification &result() const { return result_; }
    bool failed() const { return result_.state == Verification::State::failed; }

  private:
    void record_pass(const std::string &what, std::size_t n, const char *unit);
    void record_float_mismatch(const std::string &what, std::size_t index, float expected, float got,
                               std::size_t mismatches, std::size_t n);
    void record_byte_mismatch(const std::string &what, std::size_t index, unsigned expected, unsigned got,
                              std::size_t mismatches, std::size_t n);
    Verification result_;
    int checks_ = 0;
    std::vector<std::string> names_; // distinct names of the checks, in order
};

template <class ExpectedAt>
void Verifier::floats_generated(const std::string &what, float *got, std::size_t n, ExpectedAt expected_at) {
    apply_corruption_hook(got, n * sizeof(float));
    std::size_t first = n, mismatches = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (got[i] != expected_at(i)) {
            if (first == n) first = i;
            ++mismatches;
        }
    }
    if (mismatches)
        record_float_mismatch(what, first, expected_at(first), got[first], mismatches, n);
    else
        record_pass(what, n, "elements");
}

} // namespace xfer::tool

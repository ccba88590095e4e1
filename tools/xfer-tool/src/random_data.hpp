// SPDX-License-Identifier: Apache-2.0
// Random test data (never zeros) that can be regenerated from its seed, so large results are
// verified chunk by chunk without keeping a second copy of the input.
#pragma once

#include <cstddef>
#include <cstdint>

namespace xfer::tool {

// A stream of random floats in [1, 1024) (finite, positive, varied exponents) or bytes.
// The generator is splitmix64: statistically fine for test data and several times faster
// than std::mt19937_64, which matters when every run fills and regenerates gigabytes (the
// bandwidth sweep's 1 GiB buffers were a large part of compare's time).
class RandomData {
  public:
    explicit RandomData(std::uint64_t seed) : state_(seed) {}
    void fill_floats(float *out, std::size_t n);
    void fill_bytes(void *out, std::size_t bytes);

  private:
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t state_;
};

// Derives independent seeds for the arrays of one run from the run's seed.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream_id);

} // namespace xfer::tool

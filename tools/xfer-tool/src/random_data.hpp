// Random test data (never zeros) that can be regenerated from its seed, so large results are
// verified chunk by chunk without keeping a second copy of the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace xfer_tool {

// A stream of random floats in [1, 1024) (finite, positive, varied exponents) or bytes.
class RandomData {
  public:
    explicit RandomData(std::uint64_t seed) : engine_(seed) {}
    void fill_floats(float *out, std::size_t n);
    void fill_bytes(void *out, std::size_t bytes);

  private:
    std::mt19937_64 engine_;
};

// Derives independent seeds for the arrays of one run from the run's seed.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream_id);

} // namespace xfer_tool

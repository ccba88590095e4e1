// SPDX-License-Identifier: Apache-2.0
// Helpers the measurements share: figures of a row, xfer's timed calls, and the untimed
// verification of one side's copy into a cleared destination.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.hpp"
#include "bench/bench_env.hpp"
#include "bench/raw_path.hpp"
#include "verify.hpp"
#include <xfer/xfer.h>

namespace xfer::tool {

const char *direction_name(xfer_direction dir); // "h2d" | "d2h"
xfer_copy_kind copy_kind(xfer_direction dir);   // XFER_COPY_HOST_TO_DEVICE | _DEVICE_TO_HOST

// Min / median / max of the finite samples; none when there is none (e.g. a rate of a copy
// below the timer's resolution).
std::optional<Stats> finite_stats(const std::vector<double> &values);

// GB/s (10^9 B/s) of `bytes` in each sample's milliseconds.
BenchFigure bench_rate(const std::string &label, std::uint64_t bytes, const std::vector<double> &ms);
BenchFigure bench_value(const std::string &label, const std::string &unit, const std::vector<double> &values);

void set_ratio(BenchRow &row, const std::string &unit, const std::string &note, const std::vector<double> &values);
// "x" ratio of speeds: reference ms / xfer ms of each pair (> 1: xfer faster).
void set_speed_ratio(BenchRow &row, const Pairs &ms, const std::string &reference);

// xfer_copy_async of [0, bytes) of `buf` on the backend's stream, waited for; event-timed ms.
double xfer_copy_ms(BenchEnv::Backend &b, const Buffer &buf, xfer_direction dir, std::size_t bytes,
                    const std::string &name);

// Verifies that `run_copy` (which must wait for its copy) moves [0, bytes) of `buf` in `dir`:
// to the device: the device range cleared, the copy, then a raw read-back into the cleared
// host view; to the host: the host range cleared, the copy. Compared with `expected` (what
// both views hold before). A view that fails is restored, so later rows start from good data.
void verify_copy(RawPath &raw, const Buffer &buf, const std::vector<unsigned char> &expected, xfer_direction dir,
                 std::size_t bytes, const std::string &what, Verifier &verifier, const std::function<void()> &run_copy);

} // namespace xfer::tool

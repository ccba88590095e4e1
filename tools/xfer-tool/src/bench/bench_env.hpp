// SPDX-License-Identifier: Apache-2.0
// What the bench's measurements share: the backends opened once each (a testbed, a stream for
// xfer's calls and one for the raw calls), reference data and buffers kept for the whole run
// (a 1 GiB buffer is filled and verified once, not once per target), and the repeat loop that
// pairs xfer with its reference.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "testbed.hpp"

namespace xfer::tool {

// The samples of one target, xfer[i] measured right next to reference[i].
struct Pairs {
    std::vector<double> xfer, reference;
};

class BenchEnv {
  public:
    struct Backend {
        std::unique_ptr<Testbed> testbed;
        std::unique_ptr<Stream> stream;     // xfer's calls
        std::unique_ptr<Stream> raw_stream; // the raw calls, as a user's code would have its own
    };

    BenchEnv(const BenchOptions &options, Progress &progress);
    ~BenchEnv();
    BenchEnv(const BenchEnv &) = delete;
    BenchEnv &operator=(const BenchEnv &) = delete;

    const BenchOptions &options() const { return options_; }
    Progress &progress() { return progress_; }

    // Opens `name` on the first use (throws XferError when it cannot be opened).
    Backend &backend(const std::string &name);
    // The device of the first backend opened, if any.
    const std::optional<DeviceSummary> &device() const { return device_; }

    // `size` random bytes from the run's seed: what every buffer of that size holds.
    const std::vector<unsigned char> &data(std::uint64_t size);
    // A buffer of `backend` whose two views hold data(size) (several per size: `slot`). Kept
    // until the end of the run; a measurement that changes a view restores it.
    const Buffer &buffer(const std::string &backend, std::uint64_t size, int slot = 0);
    // std::malloc'd memory holding data(size), touched, freed only after every context is
    // closed (a registration cache may hold it until then).
    unsigned char *user_memory(std::uint64_t size);

    // warm-up times body(true), then repeats times body(false). Throws Interrupted before a
    // repeat once SIGINT / SIGTERM came.
    template <class Body>
    void repeat(Body body) {
        for (int i = 0; i < options_.warmup; ++i) {
            throw_if_interrupted();
            body(true);
        }
        for (int i = 0; i < options_.repeats; ++i) {
            throw_if_interrupted();
            body(false);
        }
    }

    // Each repeat runs both sides back to back; which goes first alternates, so neither
    // always inherits the other's cache and TLB state. Warm-up pairs are not kept.
    template <class Xfer, class Reference>
    Pairs pairs(Xfer xfer_once, Reference reference_once) {
        Pairs out;
        int turn = 0;
        repeat([&](bool warmup) {
            double x = 0, r = 0;
            if (turn++ % 2 == 0) {
                x = xfer_once();
                r = reference_once();
            } else {
                r = reference_once();
                x = xfer_once();
            }
            if (!warmup) {
                out.xfer.push_back(x);
                out.reference.push_back(r);
            }
        });
        return out;
    }

  private:
    struct FreeDeleter {
        void operator()(unsigned char *p) const;
    };
    // Declaration order is destruction order reversed: buffers go before their contexts,
    // user memory after every context.
    const BenchOptions &options_;
    Progress &progress_;
    std::optional<DeviceSummary> device_;
    std::map<std::uint64_t, std::unique_ptr<unsigned char, FreeDeleter>> user_memory_;
    std::map<std::uint64_t, std::vector<unsigned char>> data_;
    std::map<std::string, Backend> backends_;
    std::map<std::string, std::string> open_failures_; // backend -> why it could not be opened
    std::map<std::pair<std::string, std::pair<std::uint64_t, int>>, std::unique_ptr<Buffer>> buffers_;
};

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// The overlap workflow's passes (workflows/overlap.hpp) as bench rows.
#include "bench/measure_support.hpp"
#include "bench/measures.hpp"
#include "random_data.hpp"
#include "workflows/overlap.hpp"

namespace xfer::tool {

void measure_overlap_vs_backend(BenchEnv &env, BenchRow &row, const std::string &backend, const std::string &reference,
                                std::uint64_t bytes, int batches, int streams) {
    const std::uint64_t seed = derive_seed(env.options().seed, 5);
    OverlapPasses mine(*env.backend(backend).testbed, bytes, batches, streams, seed);
    OverlapPasses theirs(*env.backend(reference).testbed, bytes, batches, streams, seed);
    Verifier v;
    const Pairs speedup = env.pairs([&] { return mine.run(v).speedup(); }, [&] { return theirs.run(v).speedup(); });
    row.xfer = bench_value("speed-up on " + backend + " (serial / pipelined)", "x", speedup.xfer);
    row.reference = bench_value("speed-up on " + reference, "x", speedup.reference);
    std::vector<double> ratio;
    for (std::size_t i = 0; i < speedup.xfer.size(); ++i) ratio.push_back(speedup.xfer[i] / speedup.reference[i]);
    set_ratio(row, "x", backend + " speed-up / " + reference + " speed-up, per pair", ratio);
    row.verification = v.result();
}

void measure_overlap_efficiency(BenchEnv &env, BenchRow &row, const std::string &backend, std::uint64_t bytes,
                                int batches, int streams) {
    OverlapPasses passes(*env.backend(backend).testbed, bytes, batches, streams, derive_seed(env.options().seed, 5));
    Verifier v;
    std::vector<double> pipelined, ideal, efficiency;
    env.repeat([&](bool warmup) {
        const OverlapSample t = passes.run(v);
        if (warmup) return;
        pipelined.push_back(t.pipelined.total_ms);
        ideal.push_back(t.ideal_ms);
        efficiency.push_back(t.efficiency());
    });
    row.xfer = bench_value("pipelined pass", "ms", pipelined);
    row.reference = bench_value("ideal pipelined (from the serial pass's stages)", "ms", ideal);
    set_ratio(row, "x", "ideal / pipelined, per repeat (1 = copies and compute overlap perfectly)", efficiency);
    row.verification = v.result();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// A buffer shared with another process: the importer's copies against the exporter's own.
#include <cstring>

#include "bench/import_peer.hpp"
#include "bench/measure_support.hpp"
#include "bench/measures.hpp"
#include "units.hpp"

namespace xfer::tool {

void measure_import_vs_exporter(BenchEnv &env, BenchRow &row, const std::string &backend, xfer_direction dir,
                                std::uint64_t bytes) {
    BenchEnv::Backend &b = env.backend(backend);
    const std::size_t n = static_cast<std::size_t>(bytes);
    const Buffer mine(b.testbed->context(), n, XFER_ALLOC_SHAREABLE);
    RawPath raw(b);
    const std::vector<unsigned char> &expected = env.data(bytes);
    std::memcpy(mine.host(), expected.data(), n);
    raw.copy(mine.device(), mine.host(), n, XFER_COPY_HOST_TO_DEVICE);
    xfer_context_info info{};
    check(xfer_context_get_info(b.testbed->context().get(), &info), "xfer_context_get_info");
    ImportPeer peer(backend, info.device, mine.export_buffer().get());
    const std::string what = std::string(direction_name(dir)) + " " + format_size(bytes);
    const Pairs ms = env.pairs([&] { return peer.timed_copy(dir, n); },
                               [&] { return xfer_copy_ms(b, mine, dir, n, "exporter " + what); });
    row.xfer = bench_rate("xfer_copy_async on the import (another process)", bytes, ms.xfer);
    row.reference = bench_rate("xfer_copy_async on the exporter's buffer", bytes, ms.reference);
    set_speed_ratio(row, ms, "the exporter's own copy");

    Verifier v;
    verify_copy(raw, mine, expected, dir, n, "the import's copy (another process)", v, [&] { peer.copy(dir, n); });
    verify_copy(raw, mine, expected, dir, n, "the exporter's copy", v, [&] { xfer_copy_ms(b, mine, dir, n, "check"); });
    row.verification = v.result();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// batching: many small host-to-device copies (--copies x --copy-size), issued three ways: one
// xfer_memcpy_async call each, one xfer_memcpy_batch_async call, and one coalesced copy of the
// same bytes. Time and GB/s of each, plus the host time spent issuing the calls.
//
// Source: a buffer's host view; destination: another buffer's device view (two buffers, so on
// managed and zero-copy, where the views are one memory, the copy still moves bytes).
// Trace: the single copies of one repeat show as one span; an event pair around each of
// thousands of 4 KiB copies would cost about as much as the copies being measured.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "random_data.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "workflows/workflow_support.hpp"

namespace xfer::tool {
namespace {

struct MethodFigures {
    std::vector<double> device_ms, issue_ms;
};

} // namespace

void run_batching(WorkflowRun &run) {
    Testbed &s = run.testbed;
    const RunOptions &o = run.options;
    WorkflowResult &r = run.result;
    const std::size_t count = static_cast<std::size_t>(o.copies);
    const std::size_t chunk = static_cast<std::size_t>(o.copy_size);
    if (chunk != 0 && count > SIZE_MAX / chunk)
        throw std::invalid_argument("--copies x --copy-size overflows the address space");
    const std::size_t bytes = count * chunk;
    // Shared-view pointers are not plain host or device memory: let the runtime infer the kind.
    const xfer_copy_kind kind = s.shared_view() ? XFER_COPY_DEFAULT : XFER_COPY_HOST_TO_DEVICE;
    add_count_param(r, "copies", count);
    add_size_param(r, "copy size", chunk);
    add_size_param(r, "total", bytes);
    add_text_param(r, "direction", "h2d");
    add_common_params(r, o);

    Buffer src(s.context(), bytes), dst(s.context(), bytes);
    Stream stream(s.context());
    s.timeline().name_stream(stream, "stream 0");
    RandomData(derive_seed(o.seed, 6)).fill_bytes(src.host(), bytes);

    std::vector<void *> dsts(count);
    std::vector<const void *> srcs(count);
    std::vector<std::size_t> sizes(count, chunk);
    for (std::size_t i = 0; i < count; ++i) {
        dsts[i] = dst.device() + i * chunk;
        srcs[i] = src.host() + i * chunk;
    }
    const xfer_context ctx = s.context().get();

    auto issue_single = [&] {
        for (std::size_t i = 0; i < count; ++i)
            check(xfer_memcpy_async(ctx, dsts[i], srcs[i], chunk, kind, stream.get()), "xfer_memcpy_async");
    };
    auto issue_batch = [&] {
        check(xfer_memcpy_batch_async(ctx, dsts.data(), srcs.data(), sizes.data(), count, kind, stream.get()),
              "xfer_memcpy_batch_async");
    };
    auto issue_coalesced = [&] {
        check(xfer_memcpy_async(ctx, dst.device(), src.host(), bytes, kind, stream.get()), "xfer_memcpy_async");
    };

    struct Method {
        const char *name;
        std::string span;
        std::function<void()> issue;
    };
    const std::vector<Method> methods = {
        {"one call each", std::to_string(count) + " x " + format_size(chunk) + " (one call each)", issue_single},
        {"one batch call", "batch of " + std::to_string(count) + " x " + format_size(chunk), issue_batch},
        {"one coalesced copy", "coalesced " + format_size(bytes), issue_coalesced},
    };

    Verifier verifier;
    for (const Method &m : methods) {
        run.progress.detail(m.name);
        // A method that copies nothing must not inherit the previous method's result.
        clear_buffer(s, dst, stream);
        MethodFigures f;
        run_repeats(o, [&](bool warmup) {
            // Managed: the copies would otherwise run device to device from the second repeat
            // on (both ranges migrated by then); start every repeat from host to device.
            place_for(s, src, XFER_TO_DEVICE, stream);
            place_for(s, dst, XFER_TO_HOST, stream);
            Span span = s.timeline().begin(stream, m.span, "copy", bytes);
            auto t0 = Clock::now();
            m.issue();
            auto t1 = Clock::now();
            s.timeline().end(span);
            stream.synchronize();
            SpanTime t = s.timeline().finish(span);
            s.timeline().host_span(std::string("issue: ") + m.name, "host", t0, t1);
            if (!warmup) {
                f.device_ms.push_back(t.duration_ms);
                f.issue_ms.push_back(ms_between(t0, t1));
            }
        });
        fetch_to_host(s, dst, stream);
        verifier.bytes(m.name, dst.host(), src.host(), bytes);

        r.figures.push_back(time_figure(m.name, f.device_ms, bytes, "from the first copy's start to the last's end"));
        r.figures.push_back(rate_figure(m.name, bytes, f.device_ms));
        r.figures.push_back(
            time_figure(std::string(m.name) + " (host issue)", f.issue_ms, bytes, "host time spent in the call(s)"));
    }
    r.verification = verifier.result();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// The C++ layer in one program: random floats to the device and back on one stream, compared.
// The backend comes from XFER_BACKEND / XFER_CONFIG. Exit status 0 when every element came back.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <xfer/xfer.hpp>

int main() try {
    xfer::Context ctx; // backend and device from the environment / config
    xfer::Buffer buf(ctx, (1u << 20) * sizeof(float));
    xfer::Stream stream(ctx);

    auto host = buf.host_span<float>(); // std::span<float> in C++20
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    std::vector<float> expect(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = expect[i] = dist(rng);

    buf.copy_async(XFER_TO_DEVICE, stream);
    stream.synchronize();
    if (!(ctx.caps() & XFER_CAP_SHARED_VIEW)) // only the copy back can restore the host view
        std::memset(host.data(), 0, buf.bytes());
    buf.copy_async(XFER_TO_HOST, stream);
    stream.synchronize();

    for (std::size_t i = 0; i < host.size(); ++i)
        if (host[i] != expect[i]) {
            std::fprintf(stderr, "mismatch at %zu on backend %s\n", i, ctx.backend().c_str());
            return 1;
        }
    std::printf("%s: %zu floats round-tripped intact\n", ctx.backend().c_str(), host.size());
    return 0;
} catch (const xfer::Error &e) { // status and "<call>: <STATUS>: <detail>"
    std::fprintf(stderr, "%s (status %d)\n", e.what(), static_cast<int>(e.status()));
    return 1;
}

// SPDX-License-Identifier: Apache-2.0
// The C++ layer in one program: my array to the device and back on one stream, compared.
// The backend comes from XFER_BACKEND / XFER_CONFIG. Exit status 0 when every element came back.
#include <cstdio>
#include <vector>

#include <xfer/xfer.hpp>

int main() try {
    std::vector<float> a(1u << 20), back(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i) - 1e3f;
    const std::size_t bytes = a.size() * sizeof(float);

    xfer::Context ctx;            // backend and device from the environment / config
    xfer::Buffer dev(ctx, bytes); // device memory (a host view beside it, unused here)
    xfer::Stream s(ctx);
    ctx.memcpy_async(dev.device(), a.data(), bytes, XFER_COPY_HOST_TO_DEVICE, s); // returns at once
    ctx.memcpy_async(back.data(), dev.device(), bytes, XFER_COPY_DEVICE_TO_HOST, s);
    s.synchronize(); // a and back must stay untouched until here

    if (back != a) {
        std::fprintf(stderr, "mismatch on backend %s\n", ctx.backend().c_str());
        return 1;
    }
    std::printf("%s: %zu floats round-tripped intact\n", ctx.backend().c_str(), a.size());
    return 0;
} catch (const xfer::Error &e) { // status and "<call>: <STATUS>: <detail>"
    std::fprintf(stderr, "%s (status %d)\n", e.what(), static_cast<int>(e.status()));
    return 1;
}

// SPDX-License-Identifier: Apache-2.0
// Which backend xfer_open(NULL, ...) opens, and why (list marks it, run says it).
#include <gtest/gtest.h>

#include "backend_choice.hpp"

using namespace xfer::tool;

namespace {

xfer_backend_info backend(const char *name, bool available, const char *reason = "",
                          xfer_device_kind kind = XFER_DEVICE_KIND_CUDA) {
    xfer_backend_info b{};
    b.name = name;
    b.available = available ? 1 : 0;
    b.reason = reason;
    b.device_kind = kind;
    b.device_count = available ? 1 : 0;
    return b;
}

const char *const kNoGpu = "cudaGetDeviceCount: no CUDA-capable device is detected";

std::vector<xfer_backend_info> gpu_machine() {
    return {backend("host", true, "", XFER_DEVICE_KIND_HOST), backend("managed", true), backend("pageable", true),
            backend("pinned", true), backend("zerocopy", true)};
}

std::vector<xfer_backend_info> no_gpu_machine() {
    return {backend("host", true, "", XFER_DEVICE_KIND_HOST), backend("managed", false, kNoGpu),
            backend("pageable", false, kNoGpu), backend("pinned", false, kNoGpu), backend("zerocopy", false, kNoGpu)};
}

} // namespace

TEST(BackendChoice, FirstAvailableOfThePreferredOrder) {
    const BackendChoice c = choose_backend(gpu_machine(), {});
    EXPECT_EQ(c.name, "pinned"); // not the first in search order (host)
    EXPECT_TRUE(c.opens);
    EXPECT_EQ(c.reason, "the first available of pinned, pageable, managed, zerocopy, host");

    std::vector<xfer_backend_info> no_pinned = gpu_machine();
    no_pinned[3] = backend("pinned", false, "out of page-locked memory");
    const BackendChoice p = choose_backend(no_pinned, {});
    EXPECT_EQ(p.name, "pageable");
    EXPECT_EQ(p.reason, "the first available of pinned, pageable, managed, zerocopy, host (pinned: unavailable: out "
                        "of page-locked memory)");
}

TEST(BackendChoice, HostWithoutAGpuSaysWhy) {
    const BackendChoice c = choose_backend(no_gpu_machine(), {});
    EXPECT_EQ(c.name, "host");
    EXPECT_TRUE(c.opens);
    // One reason shared by the four: said once.
    EXPECT_EQ(c.reason, std::string("no GPU backend is available (pinned, pageable, managed, zerocopy: unavailable: ") +
                            kNoGpu + ")");

    // A build without the CUDA backends.
    const BackendChoice h = choose_backend({backend("host", true, "", XFER_DEVICE_KIND_HOST)}, {});
    EXPECT_EQ(h.name, "host");
    EXPECT_EQ(h.reason, "no GPU backend is available (pinned, pageable, managed, zerocopy: not found)");

    std::vector<xfer_backend_info> mixed = {backend("host", true, "", XFER_DEVICE_KIND_HOST),
                                            backend("pinned", false, "no driver"), backend("managed", false, "old")};
    EXPECT_EQ(choose_backend(mixed, {}).reason,
              "no GPU backend is available (pinned: unavailable: no driver; pageable, zerocopy: not found; "
              "managed: unavailable: old)");
}

TEST(BackendChoice, NamedByTheEnvironmentOrTheFile) {
    const BackendChoice env = choose_backend(gpu_machine(), {"host", XFER_PARAM_ENV, "/etc/xfer.ini"});
    EXPECT_EQ(env.name, "host");
    EXPECT_TRUE(env.opens);
    EXPECT_EQ(env.reason, "named by XFER_BACKEND");
    const BackendChoice file = choose_backend(gpu_machine(), {"managed", XFER_PARAM_FILE, "/etc/xfer.ini"});
    EXPECT_EQ(file.name, "managed");
    EXPECT_EQ(file.reason, "named by the backend key of the configuration file /etc/xfer.ini");

    const BackendChoice down = choose_backend(no_gpu_machine(), {"pinned", XFER_PARAM_ENV, ""});
    EXPECT_EQ(down.name, "pinned");
    EXPECT_FALSE(down.opens);
    EXPECT_EQ(down.reason, std::string("named by XFER_BACKEND, but it is unavailable: ") + kNoGpu);
    const BackendChoice missing = choose_backend(gpu_machine(), {"warp", XFER_PARAM_ENV, ""});
    EXPECT_FALSE(missing.opens);
    EXPECT_EQ(missing.reason, "named by XFER_BACKEND, but no backend of that name was found");
}

TEST(BackendChoice, AShadowingFileOfTheNameIsPassedOver) {
    // A file named like the built-in host backend in another folder is listed first, unavailable.
    const std::vector<xfer_backend_info> found = {
        backend("host", false, "a built-in backend of this name is used", XFER_DEVICE_KIND_HOST),
        backend("host", true, "", XFER_DEVICE_KIND_HOST)};
    const BackendChoice c = choose_backend(found, {});
    EXPECT_EQ(c.name, "host");
    EXPECT_TRUE(c.opens);
}

TEST(BackendChoice, NoneAvailable) {
    const BackendChoice c = choose_backend({backend("host", false, "broken", XFER_DEVICE_KIND_HOST)}, {});
    EXPECT_EQ(c.name, "");
    EXPECT_FALSE(c.opens);
    EXPECT_EQ(c.reason, "none of pinned, pageable, managed, zerocopy, host is available (pinned, pageable, managed, "
                        "zerocopy: not found; host: unavailable: broken)");
}

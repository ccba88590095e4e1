// SPDX-License-Identifier: Apache-2.0
// The kernels: host versions on the host backend, and loading the CUDA kernels library.
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "kernels.hpp"
#include "xfer_tool_kernels.h"

using namespace xfer::tool;

TEST(GatherIndex, IsAPermutationWithTheStride) {
    for (std::size_t n : {1u, 7u, 32u, 100u, 1024u, 1030u}) {
        for (std::size_t stride : {1u, 2u, 32u}) {
            std::set<std::size_t> seen;
            for (std::size_t i = 0; i < n; ++i) seen.insert(xfer_tool_gather_index(i, n, stride));
            EXPECT_EQ(seen.size(), n) << "n=" << n << " stride=" << stride;
            EXPECT_EQ(*seen.rbegin(), n - 1);
        }
    }
    // Neighbouring threads read elements `stride` apart (within the full rows).
    EXPECT_EQ(xfer_tool_gather_index(0, 1024, 32), 0u);
    EXPECT_EQ(xfer_tool_gather_index(1, 1024, 32), 32u);
    EXPECT_EQ(xfer_tool_gather_index(2, 1024, 32), 64u);
    EXPECT_EQ(xfer_tool_gather_index(32, 1024, 32), 1u);
    EXPECT_EQ(xfer_tool_gather_index(5, 1024, 1), 5u);
}

namespace {

// Host kernels run on the host backend's worker threads: open it, run, compare with the host.
class HostKernelsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ctx_ = std::make_unique<Context>("host", 0);
        stream_ = std::make_unique<Stream>(*ctx_);
        kernels_ = make_kernels(*ctx_);
    }
    std::unique_ptr<Context> ctx_;
    std::unique_ptr<Stream> stream_;
    std::unique_ptr<Kernels> kernels_;
};

} // namespace

TEST_F(HostKernelsTest, ComputeOnTheStream) {
    const std::size_t n = 1000;
    EXPECT_NE(kernels_->description().find("host"), std::string::npos);
    std::vector<float> a(n), b(n), out(n), c(n), g(n);
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = 1.0f + static_cast<float>(i) * 0.5f;
        b[i] = 3.0f + static_cast<float>(i);
    }
    std::vector<float> scaled = a;
    kernels_->sqrt(a.data(), out.data(), n, *stream_);
    kernels_->vector_add(a.data(), b.data(), c.data(), n, *stream_);
    kernels_->scale(scaled.data(), n, 1.5f, *stream_);
    kernels_->gather(a.data(), g.data(), n, 32, *stream_);
    stream_->synchronize();
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], std::sqrt(a[i])) << i;
        ASSERT_EQ(c[i], a[i] + b[i]) << i;
        ASSERT_EQ(scaled[i], a[i] * 1.5f) << i;
        ASSERT_EQ(g[i], a[xfer_tool_gather_index(i, n, 32)] + 1.0f) << i;
    }
}

TEST(CudaKernelsLibrary, MissingLibraryIsReportedWithItsPath) {
    setenv("XFER_TOOL_KERNELS_PATH", "/nonexistent/libxfer-tool-kernels-cuda.so", 1);
    try {
        make_cuda_kernels(0);
        unsetenv("XFER_TOOL_KERNELS_PATH");
        FAIL() << "no exception";
    } catch (const XferError &e) {
        unsetenv("XFER_TOOL_KERNELS_PATH");
        EXPECT_EQ(e.status(), XFER_ERROR_BACKEND_UNAVAILABLE);
        EXPECT_NE(std::string(e.what()).find("cannot load the CUDA kernels library "
                                             "'/nonexistent/libxfer-tool-kernels-cuda.so'"),
                  std::string::npos)
            << e.what();
    }
}

#ifdef XFER_TOOL_TEST_CUDA_KERNELS
// Built with CUDA: the library next to libxfer.so loads (libcudart resolves through its
// RUNPATH), reports the interface version the tool expects and exports every launcher.
TEST(CudaKernelsLibrary, LoadsWithEveryLauncher) {
    unsetenv("XFER_TOOL_KERNELS_PATH");
    std::unique_ptr<Kernels> k = make_cuda_kernels(0);
    ASSERT_TRUE(k);
    EXPECT_NE(k->description().find(XFER_TOOL_KERNELS_CUDA_FILE), std::string::npos) << k->description();
}

// The bench's raw calls take H2D, D2H or default; another kind is refused before any CUDA call
// (so this holds without a GPU too), naming the kind.
TEST(CudaKernelsLibrary, RawCallsRefuseAHostToHostKind) {
    unsetenv("XFER_TOOL_KERNELS_PATH");
    std::unique_ptr<Kernels> k = make_cuda_kernels(0);
    Context ctx("host", 0);
    Stream stream(ctx);
    unsigned char a[4] = {1, 2, 3, 4}, b[4] = {};
    try {
        k->raw_memcpy_call_ns(b, a, sizeof a, XFER_COPY_HOST_TO_HOST, 1, stream);
        FAIL() << "no exception";
    } catch (const XferError &e) {
        EXPECT_EQ(e.status(), XFER_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("copy kind 0"), std::string::npos) << e.what();
    }
    EXPECT_EQ(b[0], 0) << "nothing was copied";
}
#endif

// SPDX-License-Identifier: Apache-2.0
// Fixture of the GPU tests: a context on device 0 of the backend under test and one stream.
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "test_support.hpp"
#include <xfer/xfer.h>

namespace xfer::test {

class GpuBackendTest : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override {
        if (GetParam() != "host") {
            XFER_REQUIRE_CUDA_DEVICE();
        }
        ASSERT_XFER_OK(xfer_open(GetParam().c_str(), 0, &ctx_));
        ASSERT_XFER_OK(xfer_stream_create(ctx_, &stream_));
        xfer_context_info info{};
        ASSERT_XFER_OK(xfer_context_get_info(ctx_, &info));
        caps_ = info.caps;
    }

    void TearDown() override {
        if (ctx_ != nullptr) {
            EXPECT_XFER_OK(xfer_close(ctx_)); // releases the stream and any buffer a test left
        }
    }

    static cudaStream_t native(xfer_stream s) { return static_cast<cudaStream_t>(xfer_stream_native(s)); }
    bool shared_view() const { return (caps_ & XFER_CAP_SHARED_VIEW) != 0; }

    xfer_context ctx_ = nullptr;
    xfer_stream stream_ = nullptr;
    unsigned caps_ = 0;
};

} // namespace xfer::test

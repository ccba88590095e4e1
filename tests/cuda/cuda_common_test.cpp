// SPDX-License-Identifier: Apache-2.0
// Unit tests of the shared CUDA helper library: no device needed.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "entries.hpp" // private to cuda_common: the PCIe link of device_info
#include "plugin_loader.hpp"
#include "xfer_cuda/backend.hpp"

namespace {

using namespace xfer::cuda;
using xfer::test::captured_error;

class CudaCommon : public ::testing::Test {
  protected:
    void SetUp() override {
        set_core_services(xfer::test::capturing_services());
        xfer::test::reset_captured_error();
    }
};

TEST_F(CudaCommon, MapsCudaErrorsToStatuses) {
    EXPECT_EQ(XFER_SUCCESS, status_from_cuda(cudaSuccess));
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY, status_from_cuda(cudaErrorMemoryAllocation));
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, status_from_cuda(cudaErrorNoDevice));
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, status_from_cuda(cudaErrorInsufficientDriver));
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, status_from_cuda(cudaErrorInvalidDevice));
    EXPECT_EQ(XFER_ERROR_NOT_READY, status_from_cuda(cudaErrorNotReady));
    EXPECT_EQ(XFER_ERROR_BACKEND, status_from_cuda(cudaErrorInvalidValue));
    EXPECT_EQ(XFER_ERROR_BACKEND, status_from_cuda(cudaErrorLaunchFailure));
}

TEST_F(CudaCommon, CheckNamesTheCallTheErrorAndItsCode) {
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY, check(cudaErrorMemoryAllocation, "cudaMalloc(%zu bytes)", size_t{268435456}));
    EXPECT_EQ(1, captured_error().calls);
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY, captured_error().status);
    EXPECT_EQ("cudaMalloc(268435456 bytes): out of memory (cudaErrorMemoryAllocation=2)", captured_error().message);
}

TEST_F(CudaCommon, CheckOfSuccessReportsNothing) {
    EXPECT_EQ(XFER_SUCCESS, check(cudaSuccess, "cudaFree"));
    EXPECT_EQ(0, captured_error().calls);
}

TEST_F(CudaCommon, LastFailureKeepsStatusAndMessageTogether) {
    EXPECT_EQ(XFER_SUCCESS, last_failure(XFER_SUCCESS, XFER_SUCCESS));
    EXPECT_EQ(XFER_ERROR_BACKEND, last_failure(XFER_ERROR_BACKEND, XFER_SUCCESS));
    EXPECT_EQ(XFER_ERROR_OUT_OF_MEMORY, last_failure(XFER_ERROR_BACKEND, XFER_ERROR_OUT_OF_MEMORY));
}

TEST_F(CudaCommon, CopyKindsMustFitThePointers) {
    using M = Memory;
    // Device views of every CUDA backend are valid device-side operands.
    for (M device_view : {M::device, M::managed, M::pinned_host}) {
        EXPECT_EQ(nullptr, kind_mismatch(XFER_COPY_HOST_TO_DEVICE, device_view, M::pageable));
        EXPECT_EQ(nullptr, kind_mismatch(XFER_COPY_DEVICE_TO_HOST, M::pageable, device_view));
        EXPECT_EQ(nullptr, kind_mismatch(XFER_COPY_DEVICE_TO_DEVICE, device_view, M::device));
    }
    EXPECT_EQ(nullptr, kind_mismatch(XFER_COPY_HOST_TO_HOST, M::pageable, M::pinned_host));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_HOST_TO_DEVICE, M::pageable, M::pageable));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_HOST_TO_DEVICE, M::device, M::device));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_DEVICE_TO_HOST, M::device, M::device));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_DEVICE_TO_HOST, M::pageable, M::pageable));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_DEVICE_TO_DEVICE, M::pageable, M::device));
    EXPECT_NE(nullptr, kind_mismatch(XFER_COPY_HOST_TO_HOST, M::device, M::pageable));
    // Default infers the direction: anything goes.
    for (M a : {M::pageable, M::pinned_host, M::device, M::managed}) {
        for (M b : {M::pageable, M::pinned_host, M::device, M::managed}) {
            EXPECT_EQ(nullptr, kind_mismatch(XFER_COPY_DEFAULT, a, b));
        }
    }
}

TEST_F(CudaCommon, PcieGenerationFromSysfsSpeed) {
    EXPECT_EQ(1, pcie_generation_from_speed("2.5 GT/s PCIe"));
    EXPECT_EQ(3, pcie_generation_from_speed("8 GT/s"));
    EXPECT_EQ(4, pcie_generation_from_speed("16.0 GT/s PCIe"));
    EXPECT_EQ(5, pcie_generation_from_speed("32.0 GT/s PCIe"));
    EXPECT_EQ(6, pcie_generation_from_speed("64.0 GT/s PCIe"));
    EXPECT_EQ(0, pcie_generation_from_speed("Unknown"));
    EXPECT_EQ(0, pcie_generation_from_speed(""));
    EXPECT_EQ(0, pcie_generation_from_speed("12.0 GT/s"));
}

TEST_F(CudaCommon, PcieWidthFromSysfsText) {
    EXPECT_EQ(16, pcie_width_from_text("16"));
    EXPECT_EQ(8, pcie_width_from_text("8\n"));
    EXPECT_EQ(0, pcie_width_from_text("x"));
    EXPECT_EQ(0, pcie_width_from_text("0"));
}

TEST_F(CudaCommon, ReadsTheLinkOfALowerCasedBusId) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("xfer_pcie_test_" + std::to_string(::getpid()));
    fs::create_directories(root / "0000:1b:00.0");
    std::ofstream(root / "0000:1b:00.0" / "current_link_speed") << "32.0 GT/s PCIe\n";
    std::ofstream(root / "0000:1b:00.0" / "current_link_width") << "16\n";
    // cudaDeviceGetPCIBusId writes upper-case hex.
    const PcieLink link = read_pcie_link("0000:1B:00.0", root.string());
    EXPECT_EQ(5, link.generation);
    EXPECT_EQ(16, link.width);
    const PcieLink missing = read_pcie_link("0000:99:00.0", root.string());
    EXPECT_EQ(0, missing.generation);
    EXPECT_EQ(0, missing.width);
    fs::remove_all(root);
}

TEST_F(CudaCommon, ParamsParseRangeCheckAndDefault) {
    const xfer_backend_param_value values[] = {{"chunk_size", "1048576"}, {"staging_threads", "abc"}, {"big", "9"}};
    std::uint64_t out = 0;
    EXPECT_EQ(XFER_SUCCESS, param_u64("pageable", values, 3, "chunk_size", 7, 4096, 1u << 30, &out));
    EXPECT_EQ(1048576u, out);
    EXPECT_EQ(XFER_SUCCESS, param_u64("pageable", values, 3, "absent", 7, 0, 10, &out));
    EXPECT_EQ(7u, out);
    out = 42;
    EXPECT_EQ(XFER_ERROR_CONFIG, param_u64("pageable", values, 3, "staging_threads", 8, 1, 256, &out));
    EXPECT_EQ(42u, out) << "output written on failure";
    EXPECT_NE(std::string::npos, captured_error().message.find("staging_threads")) << captured_error().message;
    EXPECT_EQ(XFER_ERROR_CONFIG, param_u64("pageable", values, 3, "big", 1, 1, 8, &out));
    EXPECT_NE(std::string::npos, captured_error().message.find("out of range")) << captured_error().message;
}

} // namespace

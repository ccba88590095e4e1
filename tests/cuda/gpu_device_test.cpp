// SPDX-License-Identifier: Apache-2.0
// Device properties, native streams and events of the CUDA backends against the CUDA runtime.
#include <cctype>
#include <cstring>
#include <string>

#include "gpu_fixture.hpp"
#include "kernels.hpp"

namespace {

using namespace xfer::test;

class GpuDevice : public GpuBackendTest {};

std::string lower(std::string s) {
    for (char &c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

TEST_P(GpuDevice, InfoMatchesTheRuntime) {
    xfer_device_info info{};
    ASSERT_XFER_OK(xfer_device_get_info(ctx_, &info));
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaSuccess, cudaGetDeviceProperties(&prop, 0));
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
    ASSERT_EQ(cudaSuccess, cudaMemGetInfo(&free_bytes, &total_bytes));
    char bus_id[32] = {0};
    ASSERT_EQ(cudaSuccess, cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
    int driver = 0;
    int runtime = 0;
    ASSERT_EQ(cudaSuccess, cudaDriverGetVersion(&driver));
    ASSERT_EQ(cudaSuccess, cudaRuntimeGetVersion(&runtime));

    EXPECT_STREQ(prop.name, info.name);
    EXPECT_EQ(0, info.ordinal);
    EXPECT_EQ(XFER_DEVICE_KIND_CUDA, info.kind);
    EXPECT_EQ(total_bytes, info.total_memory);
    EXPECT_LE(info.free_memory, info.total_memory);
    EXPECT_GT(info.free_memory, 0u);
    EXPECT_EQ(prop.major, info.compute_major);
    EXPECT_EQ(prop.minor, info.compute_minor);
    EXPECT_EQ(prop.multiProcessorCount, info.multiprocessors);
    EXPECT_EQ(lower(bus_id), info.pci_bus_id);
    EXPECT_EQ(prop.asyncEngineCount, info.async_engine_count);
    EXPECT_EQ(prop.concurrentManagedAccess, info.concurrent_managed_access);
    EXPECT_EQ(prop.canMapHostMemory, info.can_map_host_memory);
    EXPECT_EQ(prop.unifiedAddressing, info.unified_addressing);
    EXPECT_EQ(driver, info.driver_version);
    EXPECT_EQ(runtime, info.runtime_version);
    EXPECT_GE(info.pcie_generation, 0);
    EXPECT_LE(info.pcie_generation, 7);
    EXPECT_GE(info.pcie_width, 0);
    EXPECT_LE(info.pcie_width, 32);
    RecordProperty("pcie", std::to_string(info.pcie_generation) + "x" + std::to_string(info.pcie_width));
}

TEST_P(GpuDevice, NativeStreamIsANonBlockingCudaStream) {
    cudaStream_t s = native(stream_);
    ASSERT_NE(nullptr, s);
    unsigned flags = 0;
    ASSERT_EQ(cudaSuccess, cudaStreamGetFlags(s, &flags));
    EXPECT_EQ(unsigned{cudaStreamNonBlocking}, flags);
}

TEST_P(GpuDevice, QueriesSeeRunningWorkAndEventsTimeIt) {
    xfer_event start = nullptr;
    xfer_event end = nullptr;
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DEFAULT, &start));
    ASSERT_XFER_OK(xfer_event_create(ctx_, XFER_EVENT_DEFAULT, &end));
    void *scratch = nullptr;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&scratch, 4096));

    ASSERT_XFER_OK(xfer_event_record(start, stream_));
    // 300 ms of device time: the queries right after the launch see it still running.
    ASSERT_EQ(cudaSuccess, launch_spin_then_xor(scratch, 4096, 1, 300, native(stream_)));
    ASSERT_XFER_OK(xfer_event_record(end, stream_));
    EXPECT_EQ(XFER_ERROR_NOT_READY, xfer_stream_query(stream_));
    EXPECT_EQ(XFER_ERROR_NOT_READY, xfer_event_query(end));
    float ms = -1.0f;
    EXPECT_EQ(XFER_ERROR_NOT_READY, xfer_event_elapsed_ms(start, end, &ms));
    EXPECT_EQ(-1.0f, ms);

    ASSERT_XFER_OK(xfer_event_synchronize(end));
    EXPECT_XFER_OK(xfer_event_query(end));
    EXPECT_XFER_OK(xfer_stream_query(stream_));
    ASSERT_XFER_OK(xfer_event_elapsed_ms(start, end, &ms));
    // The kernel busy-waits 300 ms on the device clock; the events must bracket at least that.
    EXPECT_GE(ms, 290.0f);
    EXPECT_EQ(cudaSuccess, cudaFree(scratch));
    EXPECT_XFER_OK(xfer_event_destroy(start));
    EXPECT_XFER_OK(xfer_event_destroy(end));
}

TEST_P(GpuDevice, DeviceIndexBeyondTheLastIsRefused) {
    xfer_context other = nullptr;
    EXPECT_EQ(XFER_ERROR_NO_DEVICE, xfer_open(GetParam().c_str(), gpu_presence().count, &other));
    EXPECT_EQ(nullptr, other);
}

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuDevice, ::testing::ValuesIn(kCudaBackends), param_name);

} // namespace

// SPDX-License-Identifier: Apache-2.0
// Shareable buffers on the GPU, in one process (the two-process tests of tests/share run the
// same exports between processes with XFER_BACKEND set to a CUDA backend): what
// xfer_buffer_get_share_info says of each backend's buffers, the device view NCCL's rules ask
// for (cuMemCreate memory, POSIX fd handle, the recommended granularity), bytes through an
// import in both directions, the exporter's free under an importer, and every forged or stale
// export refused with its status and nothing mapped.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>

#include "gpu_fixture.hpp"
#include "xfer_cuda/driver_entry.hpp"

namespace xfer::test {
namespace {

constexpr std::size_t kBytes = (5u << 20) + 77; // not a multiple of any granularity

// The driver's calls through the runtime, as the plugins reach them (no test binary links
// libcuda: the suites that need no GPU run where there is no driver).
template <class Fn>
Fn driver(const char *name) {
    return cuda::driver_entry<Fn>(name, 12000);
}

struct Expected {
    const char *host_kind, *device_kind;
    int host_dlpack, device_dlpack; // kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3, kDLCUDAManaged 13
};

Expected expected(const std::string &backend) {
    if (backend == "pinned") return {"cuda:host", "cuda:device", 3, 2};
    if (backend == "pageable") return {"system", "cuda:device", 1, 2};
    if (backend == "managed") return {"cuda:managed", "cuda:managed", 13, 13};
    return {"cuda:host", "cuda:host", 3, 3}; // zerocopy: one mapped page-locked memory
}

// The backends that export (GpuShare) and those that refuse XFER_ALLOC_SHAREABLE
// (GpuShareRefused): separate suites, so that no instantiation skips.
const std::vector<std::string> kSharing = {"pageable", "pinned"};
const std::vector<std::string> kNotSharing = {"managed", "zerocopy"};

class GpuShare : public GpuBackendTest {
  protected:
    xfer_share_info info(xfer_buffer b) {
        xfer_share_info i{};
        i.struct_size = sizeof i;
        EXPECT_XFER_OK(xfer_buffer_get_share_info(b, &i));
        return i;
    }
    Bytes read_device(const void *d, std::size_t bytes) {
        Bytes out(bytes);
        EXPECT_EQ(cudaSuccess, cudaMemcpy(out.data(), d, bytes, cudaMemcpyDeviceToHost));
        return out;
    }
    // A shareable buffer filled on both views with `seed`'s bytes (the device view by cudaMemcpy).
    xfer_buffer shareable(const Bytes &data) {
        xfer_buffer b = nullptr;
        EXPECT_XFER_OK(xfer_alloc(ctx_, data.size(), XFER_ALLOC_SHAREABLE, &b));
        if (b == nullptr) return nullptr;
        std::memcpy(xfer_host_ptr(b), data.data(), data.size());
        EXPECT_EQ(cudaSuccess, cudaMemcpy(xfer_device_ptr(b), data.data(), data.size(), cudaMemcpyHostToDevice));
        return b;
    }
    xfer_export exported(xfer_buffer b) {
        xfer_export e{};
        e.struct_size = sizeof e;
        EXPECT_XFER_OK(xfer_buffer_export(b, &e));
        return e;
    }
    // Each view's memory kind and DLPack device for a plain buffer, and bad input refused.
    void expect_share_info() {
        const Expected want = expected(GetParam());
        xfer_buffer plain = nullptr;
        ASSERT_XFER_OK(xfer_alloc(ctx_, kBytes, XFER_ALLOC_DEFAULT, &plain));
        const xfer_share_info i = info(plain);
        EXPECT_EQ(i.struct_size, sizeof(xfer_share_info));
        EXPECT_STREQ(i.host_memory_kind, want.host_kind);
        EXPECT_STREQ(i.device_memory_kind, want.device_kind);
        EXPECT_EQ(i.host_dlpack_device_type, want.host_dlpack);
        EXPECT_EQ(i.device_dlpack_device_type, want.device_dlpack);
        EXPECT_EQ(i.device_dlpack_device_id, 0); // device 0: the ordinal, or host memory's 0
        EXPECT_EQ(i.handle_types, 0u) << "a plain buffer cannot be shared";
        EXPECT_EQ(i.granularity, 0u);
        EXPECT_EQ(i.device_view_bytes, 0u);
        // Bad input: a specific status, the answer untouched.
        xfer_share_info small{};
        small.struct_size = sizeof small - 1;
        EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_get_share_info(plain, &small));
        EXPECT_EQ(small.host_memory_kind, nullptr);
        EXPECT_EQ(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_get_share_info(plain, nullptr));
        ASSERT_XFER_OK(xfer_free(plain));
        xfer_share_info after{};
        after.struct_size = sizeof after;
        EXPECT_EQ(XFER_ERROR_INVALID_HANDLE, xfer_buffer_get_share_info(plain, &after));
    }

    // Imports `e` on a second context, expecting `status` and, on failure, `words` in the message
    // and no buffer.
    void import_refused(const xfer_export &e, xfer_status status, const char *words) {
        xfer_context other = nullptr;
        ASSERT_XFER_OK(xfer_open(GetParam().c_str(), 0, &other));
        xfer_buffer b = nullptr;
        EXPECT_EQ(status, xfer_buffer_import(other, &e, &b)) << xfer_last_error();
        EXPECT_EQ(b, nullptr);
        EXPECT_NE(std::string(xfer_last_error()).find(words), std::string::npos) << xfer_last_error();
        EXPECT_XFER_OK(xfer_close(other));
    }
};

using GpuShareRefused = GpuShare;

TEST_P(GpuShareRefused, AShareableAllocationIsRefusedAndNothingAllocated) {
    xfer_buffer b = nullptr;
    EXPECT_EQ(XFER_ERROR_NOT_SUPPORTED, xfer_alloc(ctx_, kBytes, XFER_ALLOC_SHAREABLE, &b)) << xfer_last_error();
    EXPECT_EQ(b, nullptr);
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_ALLOC_SHAREABLE"), std::string::npos) << xfer_last_error();
}

TEST_P(GpuShare, TheDeviceViewIsWhatNcclRegistersZeroCopy) {
    const Expected want = expected(GetParam());
    xfer_buffer b = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, kBytes, XFER_ALLOC_SHAREABLE, &b));
    const xfer_share_info i = info(b);
    EXPECT_EQ(i.handle_types & (XFER_SHARE_HANDLE_MEMFD | XFER_SHARE_HANDLE_POSIX_FD),
              XFER_SHARE_HANDLE_MEMFD | XFER_SHARE_HANDLE_POSIX_FD);
    int rdma = 0;
    const auto attribute = driver<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
    ASSERT_TRUE(attribute);
    ASSERT_EQ(CUDA_SUCCESS, attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0));
    EXPECT_EQ(i.rdma_capable, rdma != 0 ? 1 : 0);
    EXPECT_STREQ(i.host_memory_kind, want.host_kind);
    EXPECT_STREQ(i.device_memory_kind, "cuda:device");
    // The driver's own answer: cuMemCreate memory of the recommended granularity.
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t recommended = 0;
    const auto granularity = driver<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
    const auto retain = driver<decltype(&cuMemRetainAllocationHandle)>("cuMemRetainAllocationHandle");
    const auto properties =
        driver<decltype(&cuMemGetAllocationPropertiesFromHandle)>("cuMemGetAllocationPropertiesFromHandle");
    const auto release = driver<decltype(&cuMemRelease)>("cuMemRelease");
    ASSERT_TRUE(granularity && retain && properties && release);
    ASSERT_EQ(CUDA_SUCCESS, granularity(&recommended, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    EXPECT_EQ(i.granularity, recommended);
    EXPECT_EQ(i.device_view_bytes % recommended, 0u);
    EXPECT_GE(i.device_view_bytes, kBytes);
    EXPECT_LT(i.device_view_bytes, kBytes + recommended);
    CUmemGenericAllocationHandle handle = 0;
    ASSERT_EQ(CUDA_SUCCESS, retain(&handle, xfer_device_ptr(b)));
    CUmemAllocationProp got{};
    ASSERT_EQ(CUDA_SUCCESS, properties(&got, handle));
    EXPECT_NE(got.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    EXPECT_EQ(got.allocFlags.gpuDirectRDMACapable, rdma != 0 ? 1 : 0);
    EXPECT_EQ(CUDA_SUCCESS, release(handle));
    // Copies of the buffer's own take the backend's way and keep every byte.
    const Bytes data = random_bytes(kBytes, 71);
    std::memcpy(xfer_host_ptr(b), data.data(), kBytes);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_DEVICE, 0, kBytes));
    EXPECT_EQ(read_device(xfer_device_ptr(b), kBytes), data);
    std::memset(xfer_host_ptr(b), 0, kBytes);
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, kBytes));
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(b), data.data(), kBytes));
    ASSERT_XFER_OK(xfer_free(b));
}

TEST_P(GpuShare, AnImportSeesAndWritesTheSameMemoryAndOutlivesTheExportersFree) {
    const Bytes data = random_bytes(kBytes, 72);
    xfer_buffer b = shareable(data);
    ASSERT_NE(b, nullptr);
    xfer_export e = exported(b);
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(GetParam().c_str(), 0, &other));
    xfer_buffer imported = nullptr;
    ASSERT_XFER_OK(xfer_buffer_import(other, &e, &imported));
    xfer_export_close(&e);
    EXPECT_EQ(xfer_buffer_size(imported), kBytes);
    EXPECT_NE(xfer_device_ptr(imported), xfer_device_ptr(b)) << "an import maps its own range";
    EXPECT_EQ(read_device(xfer_device_ptr(imported), kBytes), data);
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(imported), data.data(), kBytes));
    const xfer_share_info i = info(imported);
    EXPECT_EQ(i.handle_types & XFER_SHARE_HANDLE_POSIX_FD, XFER_SHARE_HANDLE_POSIX_FD);
    EXPECT_EQ(i.granularity, info(b).granularity);
    // The importer writes through its own views; the exporter reads them through its own.
    const Bytes back = random_bytes(kBytes, 73);
    std::memcpy(xfer_host_ptr(imported), back.data(), kBytes);
    ASSERT_XFER_OK(xfer_copy(imported, XFER_TO_DEVICE, 0, kBytes));
    EXPECT_EQ(read_device(xfer_device_ptr(b), kBytes), back);
    std::memset(xfer_host_ptr(b), 0, kBytes); // the same pages as the import's host view
    ASSERT_XFER_OK(xfer_copy(b, XFER_TO_HOST, 0, kBytes));
    EXPECT_EQ(0, std::memcmp(xfer_host_ptr(imported), back.data(), kBytes));
    // The exporter frees: the import keeps the memory and its bytes.
    ASSERT_XFER_OK(xfer_free(b));
    EXPECT_EQ(read_device(xfer_device_ptr(imported), kBytes), back);
    ASSERT_XFER_OK(xfer_copy(imported, XFER_TO_DEVICE, 0, kBytes));
    EXPECT_XFER_OK(xfer_free(imported));
    EXPECT_XFER_OK(xfer_close(other));
}

TEST_P(GpuShare, ForgedAndStaleExportsAreRefusedWithNothingMapped) {
    xfer_buffer plain = nullptr;
    ASSERT_XFER_OK(xfer_alloc(ctx_, kBytes, XFER_ALLOC_DEFAULT, &plain));
    xfer_export none{};
    none.struct_size = sizeof none;
    EXPECT_EQ(XFER_ERROR_INVALID_STATE, xfer_buffer_export(plain, &none)) << xfer_last_error();
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_ALLOC_SHAREABLE"), std::string::npos);
    EXPECT_EQ(none.fd_count, 0u);
    ASSERT_XFER_OK(xfer_free(plain));

    xfer_buffer b = shareable(random_bytes(kBytes, 74));
    ASSERT_NE(b, nullptr);
    xfer_export e = exported(b);
    ASSERT_EQ(e.fd_count, 2u);
    {
        xfer_export swapped = e; // the device's descriptor where the memfd belongs
        std::swap(swapped.fds[0], swapped.fds[1]);
        import_refused(swapped, XFER_ERROR_INVALID_ARGUMENT, "descriptor");
    }
    {
        // A sealed memfd of the right size where the allocation's descriptor belongs.
        xfer_export forged = e;
        const int fake = ::memfd_create("forged", MFD_CLOEXEC);
        ASSERT_GE(fake, 0);
        ASSERT_EQ(0, ::ftruncate(fake, 1 << 20));
        forged.fds[1] = fake;
        import_refused(forged, XFER_ERROR_INVALID_ARGUMENT, "cuMemImportFromShareableHandle");
        ::close(fake);
    }
    {
        xfer_export stale = e; // descriptors closed since: the memfd's number is no file now
        const int gone = ::fcntl(e.fds[0], F_DUPFD_CLOEXEC, 0);
        ASSERT_GE(gone, 0);
        ::close(gone);
        stale.fds[0] = gone;
        import_refused(stale, XFER_ERROR_INVALID_ARGUMENT, "stale");
    }
    {
        xfer_export one = e; // a descriptor short (the blob says two)
        one.fd_count = 1;
        import_refused(one, XFER_ERROR_INVALID_ARGUMENT, "descriptor");
    }
    // The untouched export still imports: nothing above left a mapping or took the memory.
    xfer_context other = nullptr;
    ASSERT_XFER_OK(xfer_open(GetParam().c_str(), 0, &other));
    xfer_buffer imported = nullptr;
    ASSERT_XFER_OK(xfer_buffer_import(other, &e, &imported));
    EXPECT_XFER_OK(xfer_free(imported));
    EXPECT_XFER_OK(xfer_close(other));
    xfer_export_close(&e);
    ASSERT_XFER_OK(xfer_free(b));
}

// What share info says holds for every backend; the rest is per group.
using GpuShareInfo = GpuShare;
TEST_P(GpuShareInfo, ForEveryBackend) { expect_share_info(); }

INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuShareInfo, ::testing::ValuesIn(kCudaBackends), param_name);
INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuShare, ::testing::ValuesIn(kSharing), param_name);
INSTANTIATE_TEST_SUITE_P(CudaBackends, GpuShareRefused, ::testing::ValuesIn(kNotSharing), param_name);

} // namespace
} // namespace xfer::test

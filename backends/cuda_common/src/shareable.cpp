// SPDX-License-Identifier: Apache-2.0
#include "shareable.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include <cuda.h>

#include "xfer_cuda/driver_entry.hpp"
#include <xfer_plugin/shared_memory.hpp>

namespace xfer::cuda {

struct SharedViews {
    HostSharing sharing = HostSharing::none;
    plugin::OwnedFd host_fd;
    void *host_map = nullptr;
    std::size_t host_bytes = 0; // mapped: b.bytes rounded up to pages
    bool host_registered = false;
    CUmemGenericAllocationHandle handle = 0;
    bool handle_held = false;
    CUdeviceptr device = 0;       // the reserved range
    std::size_t device_bytes = 0; // b.bytes rounded up to the granularity
    bool device_reserved = false;
    bool device_mapped = false;
    std::size_t granularity = 0;
    unsigned handle_types = 0;
    bool rdma = false;
};

namespace shareable {
namespace {

// The driver's virtual-memory calls, through the runtime (no plugin links libcuda).
struct Driver {
    decltype(&::cuDeviceGet) device_get = driver_entry<decltype(device_get)>("cuDeviceGet", 2000);
    decltype(&::cuDeviceGetAttribute) attribute = driver_entry<decltype(attribute)>("cuDeviceGetAttribute", 2000);
    decltype(&::cuDeviceGetUuid) uuid = driver_entry<decltype(uuid)>("cuDeviceGetUuid", 11040);
    decltype(&::cuMemGetAllocationGranularity) granularity =
        driver_entry<decltype(granularity)>("cuMemGetAllocationGranularity", 10020);
    decltype(&::cuMemCreate) create = driver_entry<decltype(create)>("cuMemCreate", 10020);
    decltype(&::cuMemRelease) release = driver_entry<decltype(release)>("cuMemRelease", 10020);
    decltype(&::cuMemAddressReserve) reserve = driver_entry<decltype(reserve)>("cuMemAddressReserve", 10020);
    decltype(&::cuMemAddressFree) address_free = driver_entry<decltype(address_free)>("cuMemAddressFree", 10020);
    decltype(&::cuMemMap) map = driver_entry<decltype(map)>("cuMemMap", 10020);
    decltype(&::cuMemUnmap) unmap = driver_entry<decltype(unmap)>("cuMemUnmap", 10020);
    decltype(&::cuMemSetAccess) set_access = driver_entry<decltype(set_access)>("cuMemSetAccess", 10020);
    decltype(&::cuMemExportToShareableHandle) export_handle =
        driver_entry<decltype(export_handle)>("cuMemExportToShareableHandle", 10020);
    decltype(&::cuMemImportFromShareableHandle) import_handle =
        driver_entry<decltype(import_handle)>("cuMemImportFromShareableHandle", 10020);
    decltype(&::cuMemGetAllocationPropertiesFromHandle) properties =
        driver_entry<decltype(properties)>("cuMemGetAllocationPropertiesFromHandle", 10020);
    decltype(&::cuGetErrorName) error_name = driver_entry<decltype(error_name)>("cuGetErrorName", 6000);

    bool complete() const noexcept {
        return device_get && attribute && uuid && granularity && create && release && reserve && address_free && map &&
               unmap && set_access && export_handle && import_handle && properties && error_name;
    }
};

const Driver &driver() {
    static const Driver d;
    return d;
}

xfer_status status_of(CUresult r) noexcept {
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
        return XFER_ERROR_OUT_OF_MEMORY;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
        return XFER_ERROR_NOT_SUPPORTED;
    default:
        return XFER_ERROR_BACKEND;
    }
}

// Reports a failed driver call: "<call>: CUDA_ERROR_... (code)", with `status` (status_of's
// when XFER_SUCCESS is passed).
template <class... Args>
xfer_status driver_failed(CUresult r, xfer_status status, const char *call_format, Args... args) {
    char call[256];
    std::snprintf(call, sizeof call, call_format, args...);
    const char *name = nullptr;
    if (driver().error_name == nullptr || driver().error_name(r, &name) != CUDA_SUCCESS || name == nullptr) {
        name = "CUDA_ERROR_UNKNOWN";
    }
    return fail(status != XFER_SUCCESS ? status : status_of(r), "%s: %s (%d)", call, name, static_cast<int>(r));
}

// The payload of an export (machine byte order: an export never leaves the machine).
struct Payload {
    std::uint32_t layout = 1;
    std::uint32_t sharing = 0; // HostSharing
    std::uint64_t bytes = 0;
    std::uint64_t host_bytes = 0;
    std::uint64_t device_bytes = 0;
    std::uint64_t granularity = 0;
    std::uint32_t handle_types = 0;
    std::uint32_t rdma = 0;
    unsigned char device_uuid[16] = {};
};

constexpr std::size_t kHostFd = 0, kDeviceFd = 1, kFds = 2;

std::string uuid_text(const unsigned char (&u)[16]) {
    char text[48];
    std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return text;
}

xfer_status device_of(const Context &ctx, CUdevice *dev, const char *what) {
    const Driver &d = driver();
    if (!d.complete()) {
        return fail(XFER_ERROR_NOT_SUPPORTED,
                    "%s: this CUDA driver lacks the virtual memory management calls (cuMemCreate, "
                    "cuMemExportToShareableHandle, ...) that shareable buffers are made of",
                    what);
    }
    if (CUresult r = d.device_get(dev, ctx.device)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuDeviceGet(%d)", what, ctx.device);
    }
    return XFER_SUCCESS;
}

xfer_status uuid_of(CUdevice dev, unsigned char (&out)[16], const char *what) {
    CUuuid u{};
    if (CUresult r = driver().uuid(&u, dev)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuDeviceGetUuid", what);
    }
    std::memcpy(out, u.bytes, sizeof out);
    return XFER_SUCCESS;
}

int attribute(CUdevice dev, CUdevice_attribute a) noexcept {
    int v = 0;
    return driver().attribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

CUmemAccessDesc read_write(CUdevice dev) noexcept {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return access;
}

// Reserves, maps and opens for the device the allocation `v.handle` (v.device_bytes, held).
xfer_status map_device_view(CUdevice dev, SharedViews &v, const char *what) {
    const Driver &d = driver();
    if (CUresult r = d.reserve(&v.device, v.device_bytes, v.granularity, 0, 0)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemAddressReserve(%zu bytes, alignment %zu)", what, v.device_bytes,
                             v.granularity);
    }
    v.device_reserved = true;
    if (CUresult r = d.map(v.device, v.device_bytes, 0, v.handle, 0)) {
        // An import whose allocation is not the size its payload says fails here.
        return driver_failed(r, r == CUDA_ERROR_INVALID_VALUE ? XFER_ERROR_INVALID_ARGUMENT : XFER_SUCCESS,
                             "%s: cuMemMap(%zu bytes)", what, v.device_bytes);
    }
    v.device_mapped = true;
    const CUmemAccessDesc access = read_write(dev);
    if (CUresult r = d.set_access(v.device, v.device_bytes, &access, 1)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemSetAccess(%zu bytes, device %d, read-write)", what,
                             v.device_bytes, static_cast<int>(dev));
    }
    return XFER_SUCCESS;
}

// Makes the device view: cuMemCreate with the handle types NCCL registers zero-copy.
xfer_status create_device_view(CUdevice dev, std::size_t bytes, SharedViews &v) {
    constexpr const char *what = "buffer_alloc (shareable)";
    const Driver &d = driver();
    if (!attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) ||
        !attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)) {
        return fail(XFER_ERROR_NOT_SUPPORTED,
                    "%s: device %d does not support virtual memory management with POSIX file descriptor handles "
                    "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "
                    "..._HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)",
                    what, static_cast<int>(dev));
    }
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    v.rdma = attribute(dev, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) != 0;
    prop.allocFlags.gpuDirectRDMACapable = v.rdma ? 1 : 0;
    const bool fabric = attribute(dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED) != 0;
    prop.requestedHandleTypes = static_cast<CUmemAllocationHandleType>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR |
                                                                       (fabric ? CU_MEM_HANDLE_TYPE_FABRIC : 0));
    if (CUresult r = d.granularity(&v.granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemGetAllocationGranularity(recommended)", what);
    }
    v.device_bytes = (bytes + v.granularity - 1) / v.granularity * v.granularity;
    CUresult r = d.create(&v.handle, v.device_bytes, &prop, 0);
    if (fabric && (r == CUDA_ERROR_NOT_PERMITTED || r == CUDA_ERROR_NOT_SUPPORTED)) {
        // The device has fabric handles but this node grants none (no IMEX channel): as NCCL,
        // fall back to the POSIX descriptor alone.
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        r = d.create(&v.handle, v.device_bytes, &prop, 0);
    }
    if (r != CUDA_SUCCESS) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemCreate(%zu bytes on device %d, POSIX fd handle%s)", what,
                             v.device_bytes, static_cast<int>(dev), v.rdma ? ", GPUDirect RDMA capable" : "");
    }
    v.handle_held = true;
    v.handle_types = XFER_SHARE_HANDLE_POSIX_FD |
                     ((prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) != 0 ? XFER_SHARE_HANDLE_FABRIC : 0u);
    return map_device_view(dev, v, what);
}

// Maps the memfd v.host_fd (v.host_bytes) and page-locks it where the backend copies by DMA.
xfer_status map_host_view(SharedViews &v, const char *what) {
    if (auto st = plugin::map_memfd(v.host_fd.get(), v.host_bytes, what, &v.host_map)) {
        return st;
    }
    if (v.sharing == HostSharing::page_locked) {
        if (auto st =
                check(cudaHostRegister(v.host_map, v.host_bytes, cudaHostRegisterDefault),
                      "%s: cudaHostRegister(%zu bytes of a memfd, cudaHostRegisterDefault)", what, v.host_bytes)) {
            return st;
        }
        v.host_registered = true;
    }
    v.handle_types |= XFER_SHARE_HANDLE_MEMFD;
    return XFER_SUCCESS;
}

// Releases whatever of `v` is held, the last step first; every failure is reported and the
// last one's status returned.
xfer_status unmake(SharedViews &v) {
    const Driver &d = driver();
    xfer_status st = XFER_SUCCESS;
    if (v.device_mapped) {
        if (CUresult r = d.unmap(v.device, v.device_bytes)) {
            st = driver_failed(r, XFER_SUCCESS, "buffer_free (shareable): cuMemUnmap(%zu bytes)", v.device_bytes);
        }
    }
    if (v.device_reserved) {
        if (CUresult r = d.address_free(v.device, v.device_bytes)) {
            st = driver_failed(r, XFER_SUCCESS, "buffer_free (shareable): cuMemAddressFree(%zu bytes)", v.device_bytes);
        }
    }
    if (v.handle_held) {
        if (CUresult r = d.release(v.handle)) {
            st = driver_failed(r, XFER_SUCCESS, "buffer_free (shareable): cuMemRelease");
        }
    }
    if (v.host_registered) {
        st = last_failure(st, check(cudaHostUnregister(v.host_map), "buffer_free (shareable): cudaHostUnregister"));
    }
    if (v.host_map != nullptr) {
        ::munmap(v.host_map, v.host_bytes);
    }
    v = SharedViews{};
    return st;
}

// Hands a finished `v` to b, or releases it.
xfer_status adopt(std::unique_ptr<SharedViews> v, xfer_status st, Buffer &b) {
    if (st != XFER_SUCCESS) {
        (void)unmake(*v); // the first failure's message stays the one reported
        return st;
    }
    b.host = v->host_map;
    b.device = reinterpret_cast<void *>(static_cast<std::uintptr_t>(v->device));
    b.shared = v.release();
    return XFER_SUCCESS;
}

} // namespace

xfer_status allocate(const Context &ctx, HostSharing sharing, Buffer &b) {
    constexpr const char *what = "buffer_alloc (shareable)";
    CUdevice dev = 0;
    if (auto st = device_of(ctx, &dev, what)) {
        return st;
    }
    auto v = std::make_unique<SharedViews>();
    v->sharing = sharing;
    // Device view first, as every CUDA backend allocates: an impossible size fails there at once.
    xfer_status st = create_device_view(dev, b.bytes, *v);
    if (st == XFER_SUCCESS) {
        v->host_bytes = plugin::round_to_pages(b.bytes);
        st = plugin::make_sealed_memfd("xfer-cuda-host-view", v->host_bytes, what, &v->host_fd);
    }
    if (st == XFER_SUCCESS) {
        st = map_host_view(*v, what);
    }
    return adopt(std::move(v), st, b);
}

xfer_status export_views(const Buffer &b, void *payload, std::size_t *payload_bytes, int *fds, std::size_t *fd_count) {
    constexpr const char *what = "buffer_export";
    if (b.shared == nullptr) {
        return fail(XFER_ERROR_INVALID_STATE,
                    "%s: the buffer was allocated without XFER_ALLOC_SHAREABLE (its device view is cudaMalloc memory, "
                    "which another process cannot map); allocate it with that flag to export it",
                    what);
    }
    if (*payload_bytes < sizeof(Payload) || *fd_count < kFds) {
        return fail(XFER_ERROR_INTERNAL, "%s: no room for the description", what);
    }
    const SharedViews &v = *b.shared;
    Payload p;
    p.sharing = static_cast<std::uint32_t>(v.sharing);
    p.bytes = b.bytes;
    p.host_bytes = v.host_bytes;
    p.device_bytes = v.device_bytes;
    p.granularity = v.granularity;
    p.handle_types = v.handle_types;
    p.rdma = v.rdma ? 1u : 0u;
    CUmemAllocationProp prop{};
    if (CUresult r = driver().properties(&prop, v.handle)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemGetAllocationPropertiesFromHandle", what);
    }
    if (auto st = uuid_of(prop.location.id, p.device_uuid, what)) {
        return st;
    }
    plugin::OwnedFd host;
    if (auto st = plugin::duplicate_fd(v.host_fd.get(), what, &host)) {
        return st;
    }
    int device_fd = -1;
    if (CUresult r = driver().export_handle(&device_fd, v.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) {
        return driver_failed(r, XFER_SUCCESS, "%s: cuMemExportToShareableHandle(POSIX file descriptor)", what);
    }
    std::memcpy(payload, &p, sizeof p);
    *payload_bytes = sizeof p;
    fds[kHostFd] = host.release();
    fds[kDeviceFd] = device_fd;
    *fd_count = kFds;
    return XFER_SUCCESS;
}

xfer_status import_views(const Context &ctx, HostSharing sharing, const void *payload, std::size_t payload_bytes,
                         const int *fds, std::size_t fd_count, Buffer &b) {
    constexpr const char *what = "buffer_import";
    Payload p;
    if (payload_bytes != sizeof p) {
        return fail(XFER_ERROR_INVALID_ARGUMENT, "%s: the export's description has %zu bytes (a CUDA buffer's has %zu)",
                    what, payload_bytes, sizeof p);
    }
    std::memcpy(&p, payload, sizeof p);
    const std::size_t host_bytes = plugin::round_to_pages(b.bytes);
    if (p.layout != 1 || p.sharing != static_cast<std::uint32_t>(sharing) || p.bytes != b.bytes ||
        p.host_bytes != host_bytes || p.granularity == 0 || p.device_bytes < b.bytes ||
        p.device_bytes % p.granularity != 0) {
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "%s: the export describes layout %u, host view kind %u, %llu bytes (host view %llu, device view "
                    "%llu at granularity %llu); a %zu-byte buffer of this backend has layout 1, kind %u, host view "
                    "%zu bytes",
                    what, p.layout, p.sharing, static_cast<unsigned long long>(p.bytes),
                    static_cast<unsigned long long>(p.host_bytes), static_cast<unsigned long long>(p.device_bytes),
                    static_cast<unsigned long long>(p.granularity), b.bytes, static_cast<unsigned>(sharing),
                    host_bytes);
    }
    if (fd_count != kFds) {
        return fail(XFER_ERROR_INVALID_ARGUMENT, "%s: a CUDA buffer travels with %zu descriptors, not %zu", what, kFds,
                    fd_count);
    }
    CUdevice dev = 0;
    if (auto st = device_of(ctx, &dev, what)) {
        return st;
    }
    unsigned char mine[16];
    if (auto st = uuid_of(dev, mine, what)) {
        return st;
    }
    if (std::memcmp(mine, p.device_uuid, sizeof mine) != 0) {
        return fail(XFER_ERROR_INVALID_ARGUMENT,
                    "%s: the export's device view lives on %s, this context's device %d is %s: import it on a "
                    "context of that GPU",
                    what, uuid_text(p.device_uuid).c_str(), ctx.device, uuid_text(mine).c_str());
    }
    const std::string kind = std::to_string(b.bytes) + "-byte buffer's host view";
    if (auto st = plugin::check_sealed_memfd(fds[kHostFd], host_bytes, kind.c_str(), what)) {
        return st;
    }
    auto v = std::make_unique<SharedViews>();
    v->sharing = sharing;
    v->host_bytes = host_bytes;
    v->device_bytes = p.device_bytes;
    v->granularity = p.granularity;
    v->rdma = p.rdma != 0;
    xfer_status st = plugin::duplicate_fd(fds[kHostFd], what, &v->host_fd);
    if (st == XFER_SUCCESS) {
        void *device_fd = reinterpret_cast<void *>(static_cast<std::intptr_t>(fds[kDeviceFd]));
        if (CUresult r = driver().import_handle(&v->handle, device_fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
            // The descriptor came from the caller: anything but a lack of memory or of support
            // means it is not an allocation's (stale, forged, another file; the driver answers
            // CUDA_ERROR_UNKNOWN for a memfd).
            const xfer_status mapped = status_of(r);
            st = driver_failed(r, mapped == XFER_ERROR_BACKEND ? XFER_ERROR_INVALID_ARGUMENT : mapped,
                               "%s: cuMemImportFromShareableHandle(descriptor %d, POSIX file descriptor)", what,
                               fds[kDeviceFd]);
        } else {
            v->handle_held = true;
        }
    }
    if (st == XFER_SUCCESS) {
        CUmemAllocationProp prop{};
        if (CUresult r = driver().properties(&prop, v->handle)) {
            st = driver_failed(r, XFER_SUCCESS, "%s: cuMemGetAllocationPropertiesFromHandle", what);
        } else if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop.location.id != dev) {
            st = fail(XFER_ERROR_INVALID_ARGUMENT, "%s: descriptor %d is an allocation of another device (%d), not %d",
                      what, fds[kDeviceFd], prop.location.id, static_cast<int>(dev));
        } else {
            v->handle_types =
                XFER_SHARE_HANDLE_POSIX_FD |
                ((prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) != 0 ? XFER_SHARE_HANDLE_FABRIC : 0u);
        }
    }
    if (st == XFER_SUCCESS) {
        st = map_device_view(dev, *v, what);
    }
    if (st == XFER_SUCCESS) {
        st = map_host_view(*v, what);
    }
    return adopt(std::move(v), st, b);
}

xfer_status release(Buffer &b) {
    std::unique_ptr<SharedViews> v(b.shared);
    b.shared = nullptr;
    return unmake(*v);
}

namespace {
// A view's memory as MPI 4.1's memory kinds and DLPack's DLDeviceType name it.
struct ViewKind {
    const char *mpi;
    int dlpack;
};
ViewKind kind_of(Memory m) noexcept {
    switch (m) {
    case Memory::pinned_host:
        return {"cuda:host", 3}; // kDLCUDAHost: page-locked (and mapped) host memory
    case Memory::device:
        return {"cuda:device", 2}; // kDLCUDA
    case Memory::managed:
        return {"cuda:managed", 13}; // kDLCUDAManaged
    case Memory::pageable:
        break;
    }
    return {"system", 1}; // kDLCPU
}
} // namespace

void describe(const Context &ctx, const Buffer &b, xfer_share_info &info) noexcept {
    const ViewKind host = kind_of(b.host_memory), device = kind_of(b.device_memory);
    info.host_memory_kind = host.mpi;
    info.device_memory_kind = device.mpi;
    info.host_dlpack_device_type = host.dlpack;
    info.device_dlpack_device_type = device.dlpack;
    // DLPack numbers host memory of every kind as device 0, CUDA memory by its ordinal.
    auto id = [&](Memory m) { return m == Memory::device || m == Memory::managed ? ctx.device : 0; };
    info.host_dlpack_device_id = id(b.host_memory);
    info.device_dlpack_device_id = id(b.device_memory);
    if (b.shared == nullptr) return;
    info.handle_types = b.shared->handle_types;
    info.rdma_capable = b.shared->rdma ? 1 : 0;
    info.granularity = b.shared->granularity;
    info.device_view_bytes = b.shared->device_bytes;
}

} // namespace shareable
} // namespace xfer::cuda

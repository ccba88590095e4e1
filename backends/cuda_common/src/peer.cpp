// SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "entries.hpp"
#include "xfer_cuda/buffer.hpp"
#include "xfer_cuda/context.hpp"
#include <xfer_plugin/paths.hpp>

namespace xfer::cuda {
namespace {

// Peer access is a property of the two devices' primary contexts, which xfer never resets: it is
// enabled once per pair, both ways, and the answer is remembered for the process. Each plugin has
// its own copy of this table; a second plugin (or the application) that enabled it first makes
// cudaDeviceEnablePeerAccess answer cudaErrorPeerAccessAlreadyEnabled, which is success here.
struct PairState {
    xfer_status status = XFER_SUCCESS; // of the first attempt; repeated for later calls
};

std::mutex &pairs_mutex() {
    static auto *m = new std::mutex; // leaked: entries may run during static destruction
    return *m;
}
std::map<std::pair<int, int>, PairState> &pairs() {
    static auto *p = new std::map<std::pair<int, int>, PairState>;
    return *p;
}

// Lets `from` access `to`'s memory where the hardware allows it.
xfer_status enable_one_way(int from, int to) {
    int can = 0;
    if (auto st =
            check(cudaDeviceCanAccessPeer(&can, from, to), "cudaDeviceCanAccessPeer(device %d, peer %d)", from, to)) {
        return st;
    }
    if (can == 0) {
        return XFER_SUCCESS; // cudaMemcpyPeerAsync stages through host memory
    }
    // `from` current for the call only: the caller's binding comes back on every path.
    CallerBinding binding;
    binding.note_replaced();
    if (auto st = check(cudaSetDevice(from), "cudaSetDevice(%d)", from)) {
        return binding.restore(st);
    }
    const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorTooManyPeers || err == cudaErrorPeerAccessUnsupported) {
        // A device can map at most 8 peers (and some links refuse): copies between this pair
        // stay correct, staged through host memory by cudaMemcpyPeerAsync.
        (void)cudaGetLastError();
        return binding.restore(XFER_SUCCESS);
    }
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
    } else if (auto st = check(err, "cudaDeviceEnablePeerAccess(peer %d, 0) on device %d", to, from)) {
        return binding.restore(st);
    }
    return binding.restore(XFER_SUCCESS);
}

// Enables peer access between devices a and b (both ways, where allowed) on first use.
xfer_status ensure_peer_access(int a, int b) {
    const std::pair<int, int> key(a < b ? a : b, a < b ? b : a);
    std::lock_guard<std::mutex> lock(pairs_mutex());
    auto found = pairs().find(key);
    if (found != pairs().end()) {
        return found->second.status == XFER_SUCCESS
                   ? XFER_SUCCESS
                   : fail(found->second.status,
                          "enabling peer access between devices %d and %d failed earlier in "
                          "this process (see the first failure)",
                          key.first, key.second);
    }
    PairState state;
    state.status = enable_one_way(key.first, key.second);
    if (state.status == XFER_SUCCESS) {
        state.status = enable_one_way(key.second, key.first);
    }
    pairs()[key] = state;
    return state.status;
}

// Checks that `ptr` is memory a copy to/from `device` may use: cudaMalloc memory of that device
// (*plain = true: cudaMemcpyPeerAsync applies), or managed / page-locked host memory (a device
// view of the managed and zero-copy backends: *plain = false, copied with cudaMemcpyDefault).
xfer_status check_pointer(const void *ptr, int device, const char *which, size_t bytes, bool *plain) {
    cudaPointerAttributes attrs{};
    const cudaError_t err = cudaPointerGetAttributes(&attrs, ptr);
    if (err != cudaSuccess) {
        return check(err, "cudaPointerGetAttributes(%s of a %zu-byte peer copy)", which, bytes);
    }
    switch (attrs.type) {
    case cudaMemoryTypeDevice:
        if (attrs.device != device) {
            return fail(XFER_ERROR_BACKEND,
                        "cudaMemcpyPeerAsync(%zu bytes): the %s is memory of device %d, but its context is bound to "
                        "device %d (cudaErrorInvalidValue); nothing was queued",
                        bytes, which, attrs.device, device);
        }
        *plain = true;
        return XFER_SUCCESS;
    case cudaMemoryTypeManaged:
    case cudaMemoryTypeHost:
        *plain = false;
        return XFER_SUCCESS;
    default:
        return fail(XFER_ERROR_BACKEND,
                    "cudaMemcpyPeerAsync(%zu bytes): the %s is pageable host memory, not memory of device %d "
                    "(cudaErrorInvalidValue); nothing was queued",
                    bytes, which, device);
    }
}

// CUDA keeps no order between a stream of one device and a cudaFree on another, so the context
// whose memory a peer copy on the other device's stream uses remembers that device:
// wait_for_queued_work then waits for it too before a buffer of that context is released.
void note_peer_stream(const Context &memory_owner, int stream_device) {
    if (stream_device != memory_owner.device) {
        memory_owner.note_peer_device(stream_device);
    }
}

xfer_status peer_copy(const Context &dst_ctx, void *dst, const Context &src_ctx, const void *src, size_t bytes,
                      const Context &stream_ctx, cudaStream_t stream, CallerBinding &binding) {
    // The copy is issued with the stream's device current, as the runtime expects (bound first,
    // so that no runtime call below binds another context implicitly); the
    // caller's binding comes back when the entry returns.
    if (auto st = activate(stream_ctx, binding)) {
        return st;
    }
    bool dst_plain = false, src_plain = false;
    if (auto st = check_pointer(dst, dst_ctx.device, "destination", bytes, &dst_plain)) {
        return st;
    }
    if (auto st = check_pointer(src, src_ctx.device, "source", bytes, &src_plain)) {
        return st;
    }
    if (auto st = ensure_peer_access(dst_ctx.device, src_ctx.device)) {
        return st;
    }
    if (auto st = plugin::take_path(XFER_PATH_PEER, XFER_REASON_MEMORY, bytes)) {
        return st;
    }
    note_peer_stream(dst_ctx, stream_ctx.device);
    note_peer_stream(src_ctx, stream_ctx.device);
    if (dst_plain && src_plain) {
        return check(cudaMemcpyPeerAsync(dst, dst_ctx.device, src, src_ctx.device, bytes, stream),
                     "cudaMemcpyPeerAsync(%zu bytes, device %d <- device %d)", bytes, dst_ctx.device, src_ctx.device);
    }
    // Managed or mapped host memory: unified addressing lets cudaMemcpyDefault find both sides.
    return check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
                 "cudaMemcpyAsync(%zu bytes, cudaMemcpyDefault, device %d <- device %d)", bytes, dst_ctx.device,
                 src_ctx.device);
}

} // namespace

xfer_status device_can_access_peer(void *ctx, void *peer, int *can_access) {
    return guarded("device_can_access_peer", [&] {
        CallerBinding binding;
        binding.note_replaced(); // a runtime call may bind a context implicitly: undone on return
        const Context &a = as_context(ctx);
        const Context &b = as_context(peer);
        int can = 0;
        if (auto st = check(cudaDeviceCanAccessPeer(&can, a.device, b.device),
                            "cudaDeviceCanAccessPeer(device %d, peer %d)", a.device, b.device)) {
            return binding.restore(st);
        }
        *can_access = can != 0 ? 1 : 0;
        return binding.restore(XFER_SUCCESS);
    });
}

xfer_status memcpy_peer_async(void *dst_ctx, void *dst, void *src_ctx, const void *src, size_t bytes, void *stream_ctx,
                              void *stream) {
    return guarded("memcpy_peer_async", [&] {
        CallerBinding binding;
        return binding.restore(peer_copy(as_context(dst_ctx), dst, as_context(src_ctx), src, bytes,
                                         as_context(stream_ctx), static_cast<cudaStream_t>(stream), binding));
    });
}

xfer_status buffer_copy_peer_async(void *dst_ctx, void *dst_buf, size_t dst_offset, void *src_ctx, void *src_buf,
                                   size_t src_offset, size_t bytes, void *stream_ctx, void *stream) {
    return guarded("buffer_copy_peer_async", [&] {
        void *dst = static_cast<unsigned char *>(as_buffer(dst_buf).device) + dst_offset;
        const void *src = static_cast<const unsigned char *>(as_buffer(src_buf).device) + src_offset;
        CallerBinding binding;
        return binding.restore(peer_copy(as_context(dst_ctx), dst, as_context(src_ctx), src, bytes,
                                         as_context(stream_ctx), static_cast<cudaStream_t>(stream), binding));
    });
}

} // namespace xfer::cuda

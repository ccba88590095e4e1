// SPDX-License-Identifier: Apache-2.0
// Loads the CUDA kernels library at run time, so xfer-tool starts (and runs the host backend)
// on machines without libcudart.
#include <cstdlib>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "kernels.hpp"
#include "xfer_tool_kernels.h"

namespace xfer::tool {
namespace {

std::filesystem::path kernels_library_path() {
    if (const char *env = std::getenv("XFER_TOOL_KERNELS_PATH"); env && *env) return env;
    std::error_code ec;
    std::filesystem::path exe = boost::dll::program_location(ec);
    if (ec) return XFER_TOOL_KERNELS_CUDA_FILE; // fall back to the dynamic loader's search
    return exe.parent_path().parent_path() / XFER_TOOL_LIBDIR / XFER_TOOL_KERNELS_CUDA_FILE;
}

class CudaKernels final : public Kernels {
  public:
    explicit CudaKernels(int device) : device_(device), path_(kernels_library_path()) {
        std::error_code ec;
        library_.load(path_, boost::dll::load_mode::default_mode, ec);
        if (ec)
            throw XferError(XFER_ERROR_BACKEND_UNAVAILABLE,
                            "cannot load the CUDA kernels library '" + path_.string() + "': " + ec.message() +
                                " (xfer-tool built without CUDA, or libcudart missing; XFER_TOOL_KERNELS_PATH "
                                "names another file)");
        abi_ = symbol<decltype(xfer_tool_kernels_abi)>(XFER_TOOL_SYM_ABI);
        error_string_ = symbol<decltype(xfer_tool_cuda_error_string)>(XFER_TOOL_SYM_ERROR_STRING);
        sqrt_ = symbol<decltype(xfer_tool_sqrt)>(XFER_TOOL_SYM_SQRT);
        vector_add_ = symbol<decltype(xfer_tool_vector_add)>(XFER_TOOL_SYM_VECTOR_ADD);
        scale_ = symbol<decltype(xfer_tool_scale)>(XFER_TOOL_SYM_SCALE);
        gather_ = symbol<decltype(xfer_tool_gather)>(XFER_TOOL_SYM_GATHER);
        raw_memcpy_async_ = symbol<decltype(xfer_tool_raw_memcpy_async)>(XFER_TOOL_SYM_RAW_MEMCPY_ASYNC);
        raw_prefetch_async_ = symbol<decltype(xfer_tool_raw_prefetch_async)>(XFER_TOOL_SYM_RAW_PREFETCH_ASYNC);
        raw_memcpy_loop_ = symbol<decltype(xfer_tool_raw_memcpy_loop)>(XFER_TOOL_SYM_RAW_MEMCPY_LOOP);
        raw_memcpy_call_ns_ = symbol<decltype(xfer_tool_raw_memcpy_call_ns)>(XFER_TOOL_SYM_RAW_MEMCPY_CALL_NS);
        raw_memset_async_ = symbol<decltype(xfer_tool_raw_memset_async)>(XFER_TOOL_SYM_RAW_MEMSET_ASYNC);
        raw_memcpy_peer_async_ = symbol<decltype(xfer_tool_raw_memcpy_peer_async)>(XFER_TOOL_SYM_RAW_MEMCPY_PEER_ASYNC);
        if (int abi = abi_(); abi != XFER_TOOL_KERNELS_ABI)
            throw XferError(XFER_ERROR_BACKEND_ABI, "CUDA kernels library '" + path_.string() + "' has interface " +
                                                        std::to_string(abi) + ", xfer-tool needs " +
                                                        std::to_string(XFER_TOOL_KERNELS_ABI));
    }

    std::string description() const override { return "cuda (" + path_.string() + ")"; }

    void sqrt(const float *in, float *out, std::size_t n, const Stream &s) override {
        checked(sqrt_(device_, in, out, n, native(s)), "xfer_tool_sqrt");
    }
    void vector_add(const float *a, const float *b, float *c, std::size_t n, const Stream &s) override {
        checked(vector_add_(device_, a, b, c, n, native(s)), "xfer_tool_vector_add");
    }
    void scale(float *data, std::size_t n, float factor, const Stream &s) override {
        checked(scale_(device_, data, n, factor, native(s)), "xfer_tool_scale");
    }
    void gather(const float *in, float *out, std::size_t n, std::size_t stride, const Stream &s) override {
        checked(gather_(device_, in, out, n, stride, native(s)), "xfer_tool_gather");
    }

    void raw_memcpy_async(void *dst, const void *src, std::size_t bytes, xfer_direction dir, const Stream &s) override {
        char message[320] = "";
        raw_checked(raw_memcpy_async_(device_, dst, src, bytes, raw_direction(dir), native(s), message, sizeof message),
                    message);
    }
    void raw_prefetch_async(const void *ptr, std::size_t bytes, xfer_direction dir, const Stream &s) override {
        char message[320] = "";
        raw_checked(raw_prefetch_async_(device_, ptr, bytes, raw_direction(dir), native(s), message, sizeof message),
                    message);
    }

    void raw_memcpy_loop(void *const *dsts, const void *const *srcs, const std::size_t *sizes, std::size_t count,
                         xfer_copy_kind kind, const Stream &s) override {
        const int direction = raw_kind(kind); // refused before anything is queued
        char message[320] = "";
        raw_checked(raw_memcpy_loop_(device_, dsts, srcs, sizes, count, direction, native(s), message, sizeof message),
                    message);
    }
    double raw_memcpy_call_ns(void *dst, const void *src, std::size_t bytes, xfer_copy_kind kind, std::size_t calls,
                              const Stream &s) override {
        const int direction = raw_kind(kind); // refused before anything is queued
        char message[320] = "";
        double ns = 0;
        raw_checked(
            raw_memcpy_call_ns_(device_, dst, src, bytes, direction, native(s), calls, &ns, message, sizeof message),
            message);
        return ns;
    }
    void raw_memset_async(void *ptr, int value, std::size_t bytes, const Stream &s) override {
        char message[320] = "";
        raw_checked(raw_memset_async_(device_, ptr, value, bytes, native(s), message, sizeof message), message);
    }
    void raw_memcpy_peer_async(void *dst, int dst_device, const void *src, int src_device, std::size_t bytes,
                               int stream_device, const Stream &s) override {
        char message[320] = "";
        raw_checked(raw_memcpy_peer_async_(stream_device, dst, dst_device, src, src_device, bytes, native(s), message,
                                           sizeof message),
                    message);
    }

  private:
    template <class Fn>
    Fn *symbol(const char *name) {
        if (!library_.has(name))
            throw XferError(XFER_ERROR_BACKEND_ABI,
                            "CUDA kernels library '" + path_.string() + "' lacks the symbol " + name);
        return &library_.get<Fn>(name);
    }

    static void *native(const Stream &s) {
        void *stream = xfer_stream_native(s.get());
        if (!stream) check(XFER_ERROR_INVALID_HANDLE, "xfer_stream_native");
        return stream;
    }

    void checked(int code, const char *launcher) const {
        if (code != 0)
            throw XferError(XFER_ERROR_BACKEND,
                            std::string(launcher) + ": kernel launch failed: " + error_string_(code));
    }

    static int raw_direction(xfer_direction dir) {
        return dir == XFER_TO_DEVICE ? XFER_TOOL_RAW_TO_DEVICE : XFER_TOOL_RAW_TO_HOST;
    }

    static int raw_kind(xfer_copy_kind kind) {
        switch (kind) {
        case XFER_COPY_HOST_TO_DEVICE:
            return XFER_TOOL_RAW_TO_DEVICE;
        case XFER_COPY_DEVICE_TO_HOST:
            return XFER_TOOL_RAW_TO_HOST;
        case XFER_COPY_DEFAULT:
            return XFER_TOOL_RAW_DEFAULT;
        default:
            break;
        }
        throw XferError(XFER_ERROR_INVALID_ARGUMENT, "raw CUDA call: copy kind " +
                                                         std::to_string(static_cast<int>(kind)) +
                                                         " is not host to device, device to host or default");
    }

    // The library's message names the CUDA call that failed and its arguments.
    static void raw_checked(int code, const char *message) {
        if (code != 0)
            throw XferError(XFER_ERROR_BACKEND,
                            std::string("raw CUDA call failed: ") + (*message ? message : "(no message)"));
    }

    int device_;
    std::filesystem::path path_;
    boost::dll::shared_library library_;
    decltype(xfer_tool_kernels_abi) *abi_ = nullptr;
    decltype(xfer_tool_cuda_error_string) *error_string_ = nullptr;
    decltype(xfer_tool_sqrt) *sqrt_ = nullptr;
    decltype(xfer_tool_vector_add) *vector_add_ = nullptr;
    decltype(xfer_tool_scale) *scale_ = nullptr;
    decltype(xfer_tool_gather) *gather_ = nullptr;
    decltype(xfer_tool_raw_memcpy_async) *raw_memcpy_async_ = nullptr;
    decltype(xfer_tool_raw_prefetch_async) *raw_prefetch_async_ = nullptr;
    decltype(xfer_tool_raw_memcpy_loop) *raw_memcpy_loop_ = nullptr;
    decltype(xfer_tool_raw_memcpy_call_ns) *raw_memcpy_call_ns_ = nullptr;
    decltype(xfer_tool_raw_memset_async) *raw_memset_async_ = nullptr;
    decltype(xfer_tool_raw_memcpy_peer_async) *raw_memcpy_peer_async_ = nullptr;
};

} // namespace

std::unique_ptr<Kernels> make_cuda_kernels(int device) { return std::make_unique<CudaKernels>(device); }

} // namespace xfer::tool

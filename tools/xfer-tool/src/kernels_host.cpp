// SPDX-License-Identifier: Apache-2.0
// Host versions of the workflow kernels, queued with xfer_stream_launch_host_func so they run
// in stream order on the host backend's worker thread (its "device").
#include <cmath>
#include <functional>

#include "kernels.hpp"
#include "xfer_tool_kernels.h"

namespace xfer::tool {
namespace {

// The callback owns its closure: the host function runs after launch() has returned.
void run_and_delete(void *user_data) {
    auto *work = static_cast<std::function<void()> *>(user_data);
    (*work)();
    delete work;
}

void launch(const Stream &s, std::function<void()> body, const char *what) {
    auto *work = new std::function<void()>(std::move(body));
    xfer_status st = xfer_stream_launch_host_func(s.get(), run_and_delete, work);
    if (st != XFER_SUCCESS) {
        delete work; // not queued: nobody else will run or free it
        check(st, what);
    }
}

class HostKernels final : public Kernels {
  public:
    std::string description() const override { return "host (stream-ordered host functions)"; }

    void sqrt(const float *in, float *out, std::size_t n, const Stream &s) override {
        launch(
            s,
            [=] {
                for (std::size_t i = 0; i < n; ++i) out[i] = std::sqrt(in[i]);
            },
            "xfer_stream_launch_host_func(sqrt)");
    }

    void vector_add(const float *a, const float *b, float *c, std::size_t n, const Stream &s) override {
        launch(
            s,
            [=] {
                for (std::size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
            },
            "xfer_stream_launch_host_func(vector_add)");
    }

    void scale(float *data, std::size_t n, float factor, const Stream &s) override {
        launch(
            s,
            [=] {
                for (std::size_t i = 0; i < n; ++i) data[i] = data[i] * factor;
            },
            "xfer_stream_launch_host_func(scale)");
    }

    void gather(const float *in, float *out, std::size_t n, std::size_t stride, const Stream &s) override {
        launch(
            s,
            [=] {
                for (std::size_t i = 0; i < n; ++i) out[i] = in[xfer_tool_gather_index(i, n, stride)] + 1.0f;
            },
            "xfer_stream_launch_host_func(gather)");
    }

    // The host backend's raw equivalent is a plain std::memcpy on the calling thread
    // (raw_copy.cpp, peer.cpp, bench/raw_path.cpp), not a stream operation.
    void raw_memcpy_async(void *, const void *, std::size_t, xfer_direction, const Stream &) override {
        no_cuda_call("raw_memcpy_async");
    }
    void raw_prefetch_async(const void *, std::size_t, xfer_direction, const Stream &) override {
        no_cuda_call("raw_prefetch_async");
    }
    void raw_memcpy_loop(void *const *, const void *const *, const std::size_t *, std::size_t, xfer_copy_kind,
                         const Stream &) override {
        no_cuda_call("raw_memcpy_loop");
    }
    double raw_memcpy_call_ns(void *, const void *, std::size_t, xfer_copy_kind, std::size_t, const Stream &) override {
        no_cuda_call("raw_memcpy_call_ns");
    }
    void raw_memset_async(void *, int, std::size_t, const Stream &) override { no_cuda_call("raw_memset_async"); }
    void raw_memcpy_peer_async(void *, int, const void *, int, std::size_t, int, const Stream &) override {
        no_cuda_call("raw_memcpy_peer_async");
    }

  private:
    [[noreturn]] static void no_cuda_call(const char *what) {
        throw XferError(XFER_ERROR_NOT_SUPPORTED, std::string(what) + ": the host kernels make no CUDA calls");
    }
};

} // namespace

std::unique_ptr<Kernels> make_host_kernels() { return std::make_unique<HostKernels>(); }

} // namespace xfer::tool

// The views of a buffer as the CUDA backends lay them out.
#pragma once

#include <cstddef>

namespace xfer::cuda {

struct Buffer {
    void *host = nullptr;    // host view
    void *device = nullptr;  // device view (== host for managed)
    std::size_t bytes = 0;
};

inline Buffer &as_buffer(void *buf) { return *static_cast<Buffer *>(buf); }

}  // namespace xfer::cuda

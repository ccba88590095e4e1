// SPDX-License-Identifier: Apache-2.0
#include "xfer_cuda/backend.hpp"
#include "xfer_cuda/context.hpp"
#include "xfer_cuda/entries.hpp"
#include "xfer_cuda/peer.hpp"
#include "xfer_cuda/registration.hpp"

namespace xfer::cuda {

void fill_common_entries(xfer_backend_table &t) noexcept {
    t.abi_major = XFER_BACKEND_ABI_MAJOR;
    t.abi_minor = XFER_BACKEND_ABI_MINOR;
    t.struct_size = sizeof(xfer_backend_table);
    t.device_kind = XFER_DEVICE_KIND_CUDA;
    t.context_destroy = context_destroy;
    t.stream_create = stream_create;
    t.stream_destroy = stream_destroy;
    t.stream_synchronize = stream_synchronize;
    t.device_info = device_info;
    t.memcpy_async = memcpy_async;
    t.memcpy_batch_async = memcpy_batch_async;
    t.stream_query = stream_query;
    t.stream_wait_event = stream_wait_event;
    t.stream_launch_host_func = stream_launch_host_func;
    t.stream_native = stream_native;
    t.event_create = event_create;
    t.event_destroy = event_destroy;
    t.event_record = event_record;
    t.event_synchronize = event_synchronize;
    t.event_query = event_query;
    t.event_elapsed_ms = event_elapsed_ms;
    t.register_memory = register_memory;
    t.unregister_memory = unregister_memory;
    t.registration_stats = registration_stats;
    t.device_can_access_peer = device_can_access_peer;
    t.memcpy_peer_async = memcpy_peer_async;
    t.buffer_copy_peer_async = buffer_copy_peer_async;
}

xfer_backend_table describe(const BackendDescription &d) noexcept {
    xfer_backend_table t{};
    fill_common_entries(t);
    t.name = d.name;
    t.description = d.description;
    t.caps = d.caps;
    t.params = d.params;
    t.param_count = d.param_count;
    return t;
}

}  // namespace xfer::cuda

// SPDX-License-Identifier: Apache-2.0
#include "workflows/workflow.hpp"

namespace xfer::tool {

const std::vector<Workflow> &all_workflows() {
    static const std::vector<Workflow> list = {
        {"roundtrip", "host data -> device -> element-wise sqrt on the device -> host, verified; time of each stage",
         run_roundtrip},
        {"sync-async",
         "one transfer issued blocking and on a stream: host-blocked time, and the total with host work "
         "in between",
         run_sync_async},
        {"bandwidth", "H2D, D2H and bidirectional over a size sweep (--sizes), min/median/max over --repeats",
         run_bandwidth},
        {"vector-add",
         "c = a + b on the device: shared memory directly on managed/zerocopy, explicit copies "
         "elsewhere",
         run_vector_add},
        {"overlap", "--batches of copy in -> scale -> copy out, serial on one stream vs pipelined over --streams",
         run_overlap},
        {"batching", "--copies small copies of --copy-size: one call each, one batch call, one coalesced copy",
         run_batching},
        {"access", "a kernel reading device-visible memory coalesced and with a --stride", run_access},
        {"peer",
         "device-to-device copies of --size between every pair of devices of the backend, both "
         "directions, xfer against the raw peer copy (not in 'all': needs two devices)",
         run_peer, false},
    };
    return list;
}

const Workflow *find_workflow(const std::string &name) {
    for (const Workflow &w : all_workflows())
        if (name == w.name) return &w;
    return nullptr;
}

} // namespace xfer::tool

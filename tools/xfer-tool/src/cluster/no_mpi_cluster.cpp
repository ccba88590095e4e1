// SPDX-License-Identifier: Apache-2.0
// join_cluster() of a build without MPI: every process runs alone, as a plain run does.
#include <cstdio>

#include "cluster/cluster.hpp"
#include "messages.hpp"

namespace xfer::tool {

std::unique_ptr<Cluster> join_cluster() {
    // Said once per process, so that N copies of the report are not a surprise.
    if (started_by_mpi_launcher())
        std::fprintf(stderr,
                     "%s: started by an MPI launcher, but this xfer-tool was built without MPI: each process "
                     "runs and reports alone\n",
                     message_prefix());
    return nullptr;
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// Whether an MPI launcher started this process, from the environment alone: deciding must not
// initialise MPI (a plain run never does), and MPI_Init without a launcher would start a
// singleton that only slows a plain run down.
#include <cstdlib>
#include <string>

#include "cluster/cluster.hpp"

namespace xfer::tool {

bool started_by_mpi_launcher(const std::function<const char *(const char *)> &getenv) {
    // The opt-out, for a process that inherits a launcher's variables without being one of its
    // ranks (xfer-tool started by a rank of an MPI application).
    if (const char *v = getenv("XFER_TOOL_MPI"); v && std::string(v) == "0") return false;
    for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
        if (const char *v = getenv(name); v && *v) return true;
    return false;
}

bool started_by_mpi_launcher() {
    return started_by_mpi_launcher([](const char *name) -> const char * { return std::getenv(name); });
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// The processes of one MPI launch (`mpirun -np N xfer-tool run ...`), seen from one of them:
// the one interface between the tool and MPI. mpi_cluster.cpp implements it where CMake found
// an MPI; no_mpi_cluster.cpp (every process alone) everywhere else, so nothing else in the
// tool knows whether MPI is there.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace xfer::tool {

class Cluster {
  public:
    virtual ~Cluster() = default; // finalises MPI

    virtual int rank() const = 0;
    virtual int size() const = 0;
    // The rank among the processes of this host (MPI_Comm_split_type MPI_COMM_TYPE_SHARED):
    // what picks this rank's GPU.
    virtual int local_rank() const = 0;

    // The collectives below are called by every rank in the same order. A rank that waits in
    // one sleeps between polls instead of spinning a core that a rank still measuring on the
    // same host may need.

    // True on every rank when `ok` is true on every rank.
    virtual bool all_ok(bool ok) = 0;
    // Every rank's bytes, in rank order, on rank 0; empty on the other ranks.
    virtual std::vector<std::string> gather(const std::string &bytes) = 0;
    // Rank 0's value, on every rank.
    virtual int broadcast(int value) = 0;
};

// True when this process was started by an MPI launcher: one of the variables that Open MPI
// (OMPI_COMM_WORLD_SIZE), PMIx launchers (PMIX_RANK: Open MPI 5, `srun --mpi=pmix`) and
// PMI-1/2 launchers (PMI_SIZE: MPICH's Hydra, Intel MPI, `srun --mpi=pmi2`) give every process
// they start is set, and XFER_TOOL_MPI is not "0". `getenv` is a parameter for the tests.
bool started_by_mpi_launcher(const std::function<const char *(const char *)> &getenv);
bool started_by_mpi_launcher();

// The launch this process belongs to, with MPI initialised, when it was started by an MPI
// launcher; nullptr otherwise, before MPI is touched (a plain run pays nothing for it). In a
// build without MPI always nullptr, after a note on stderr when a launcher started it (every
// process then runs and reports alone). MPI's own error handling applies: an MPI that cannot
// start ends the process with its message.
std::unique_ptr<Cluster> join_cluster();

} // namespace xfer::tool

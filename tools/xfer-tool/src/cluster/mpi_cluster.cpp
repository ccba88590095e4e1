// SPDX-License-Identifier: Apache-2.0
// The Cluster of a build with MPI (C bindings, MPI::MPI_C). MPI keeps its default error
// handler (MPI_ERRORS_ARE_FATAL): a failed communication ends the whole job with MPI's own
// message, rather than leaving the other ranks waiting in a collective forever.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "cluster/cluster.hpp"

namespace xfer::tool {
namespace {

// How often a waiting rank looks: short against any workflow, and between looks it sleeps,
// where MPI's blocking calls would spin a core a rank on the same host may be measuring with.
constexpr auto kPoll = std::chrono::milliseconds(1);

// Bytes per message of gather(): MPI counts are int.
constexpr std::size_t kChunk = std::size_t{1} << 30;

void wait(MPI_Request &request) {
    for (;;) {
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done) return;
        std::this_thread::sleep_for(kPoll);
    }
}

class MpiCluster final : public Cluster {
  public:
    MpiCluster() {
        // FUNNELED: the backends run worker threads; only this (the main) thread calls MPI.
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        // A communicator of its own: nothing else in the process can match the tool's messages.
        MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        // Ranks that share memory share a host: the portable local rank, whatever the launcher.
        MPI_Comm host;
        MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
        MPI_Comm_rank(host, &local_rank_);
        MPI_Comm_free(&host);
    }
    ~MpiCluster() override {
        MPI_Comm_free(&comm_);
        MPI_Finalize();
    }
    MpiCluster(const MpiCluster &) = delete;
    MpiCluster &operator=(const MpiCluster &) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int local_rank() const override { return local_rank_; }

    bool all_ok(bool ok) override {
        int in = ok ? 1 : 0, out = 0;
        MPI_Request request;
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_, &request);
        wait(request);
        return out != 0;
    }

    int broadcast(int value) override {
        MPI_Request request;
        MPI_Ibcast(&value, 1, MPI_INT, 0, comm_, &request);
        wait(request);
        return value;
    }

    // Point to point rather than MPI_Gatherv, whose int displacements would cap the bytes of
    // all ranks together at 2 GiB: a length, then chunks of at most kChunk, from each rank in
    // turn.
    std::vector<std::string> gather(const std::string &bytes) override {
        if (rank_ != 0) {
            send(bytes);
            return {};
        }
        std::vector<std::string> all(static_cast<std::size_t>(size_));
        all[0] = bytes;
        for (int from = 1; from < size_; ++from) all[static_cast<std::size_t>(from)] = receive(from);
        return all;
    }

  private:
    static constexpr int kLengthTag = 1, kChunkTag = 2;

    void send(const std::string &bytes) {
        std::uint64_t length = bytes.size();
        MPI_Request request;
        MPI_Isend(&length, 1, MPI_UINT64_T, 0, kLengthTag, comm_, &request);
        wait(request);
        for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
            const int n = static_cast<int>(std::min(kChunk, bytes.size() - at));
            MPI_Isend(bytes.data() + at, n, MPI_BYTE, 0, kChunkTag, comm_, &request);
            wait(request);
        }
    }

    std::string receive(int from) {
        std::uint64_t length = 0;
        MPI_Request request;
        MPI_Irecv(&length, 1, MPI_UINT64_T, from, kLengthTag, comm_, &request);
        wait(request);
        std::string bytes(length, '\0');
        for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
            const int n = static_cast<int>(std::min<std::size_t>(kChunk, bytes.size() - at));
            MPI_Irecv(bytes.data() + at, n, MPI_BYTE, from, kChunkTag, comm_, &request);
            wait(request);
        }
        return bytes;
    }

    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1, local_rank_ = 0;
};

} // namespace

std::unique_ptr<Cluster> join_cluster() {
    if (!started_by_mpi_launcher()) return nullptr;
    return std::make_unique<MpiCluster>();
}

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// Another process that imports a buffer of this one (xfer_buffer_import) and copies on it when
// asked: what the bench's import rows time against the exporter's own copies. The peer is the
// program xfer-bench-import-peer next to xfer-tool, spoken to over a socketpair: the export
// first (xfer_export_send), then one request and one reply per copy.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <xfer/xfer.h>

namespace xfer::tool {

// The conversation's messages (both processes are this build: machine byte order).
struct PeerRequest {
    char op = 0; // 't' one timed copy, 'c' one untimed copy, 'q' the end
    std::uint8_t dir = 0;
    std::uint64_t bytes = 0;
};
struct PeerReply {
    std::int32_t status = 0; // xfer_status of the peer's calls
    double ms = 0;           // the timed copy's event time
    char message[512] = {};  // xfer_last_error() of a failure
};

class ImportPeer {
  public:
    // Starts the peer on `backend`, device `device`, and hands it `e`; throws (the peer's
    // message) when it cannot import.
    ImportPeer(const std::string &backend, int device, const xfer_export &e);
    ~ImportPeer();
    ImportPeer(const ImportPeer &) = delete;
    ImportPeer &operator=(const ImportPeer &) = delete;

    // The peer's xfer_copy_async of [0, bytes) of its import in `dir` on its stream, waited
    // for; event-timed ms.
    double timed_copy(xfer_direction dir, std::size_t bytes);
    // The same, untimed (verification).
    void copy(xfer_direction dir, std::size_t bytes);

  private:
    PeerReply ask(const PeerRequest &r);
    // Says 'q', closes the socket and waits for the peer's exit.
    void stop() noexcept;
    int socket_ = -1;
    pid_t pid_ = -1;
};

} // namespace xfer::tool

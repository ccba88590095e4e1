// SPDX-License-Identifier: Apache-2.0
// Who speaks in the tool's lines on stderr: "xfer-tool", or "xfer-tool[rank 3]" in a process
// of an MPI survey, where the launcher merges the stderr of every rank into one stream.
#pragma once

namespace xfer::tool {

// "xfer-tool" until set_message_rank() is called; lives as long as the process.
const char *message_prefix();
// Called once, by the survey, before anything is measured (not thread-safe).
void set_message_rank(int rank);

} // namespace xfer::tool

// SPDX-License-Identifier: Apache-2.0
// The blob of an xfer_buffer_export: a header the core writes and checks (magic, version, its
// own size, the buffer's size, the backend's name, how many descriptors travel with it, a
// checksum over all of it) followed by the backend's payload. Integers are the machine's own
// byte order: an export never leaves the machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <xfer/xfer.h>

namespace xfer::core::export_blob {

// What fits after the header.
std::size_t payload_capacity() noexcept;

// The backend's payload goes here, before seal() writes the header around it.
unsigned char *payload_of(xfer_export &out) noexcept;

// Writes the header for a payload of payload_bytes already at payload_of(out) and out's
// fd_count, and sets out's version and blob_bytes.
void seal(xfer_export &out, const std::string &backend, std::uint64_t buffer_bytes, std::size_t payload_bytes);

// What a checked blob says.
struct Contents {
    std::uint64_t buffer_bytes;
    const unsigned char *payload;
    std::size_t payload_bytes;
};

// Checks `in` against everything the header says and against the importing context's backend;
// throws XFER_ERROR_INVALID_ARGUMENT naming what is wrong (`function` starts the message).
Contents open(const xfer_export &in, const std::string &backend, const char *function);

} // namespace xfer::core::export_blob

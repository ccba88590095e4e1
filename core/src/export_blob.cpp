// SPDX-License-Identifier: Apache-2.0
#include "export_blob.hpp"

#include <cstring>

#include "error.hpp"

namespace xfer::core::export_blob {
namespace {

constexpr char kMagic[8] = {'X', 'F', 'E', 'R', 'B', 'U', 'F', '\0'};
constexpr std::size_t kBackendName = 32;

struct Header {
    char magic[8];
    std::uint32_t header_bytes;
    std::uint32_t version;
    std::uint64_t buffer_bytes;
    std::uint32_t payload_bytes;
    std::uint32_t fd_count;
    char backend[kBackendName];
    std::uint64_t checksum; // FNV-1a over the header (this field 0) and the payload
};
static_assert(sizeof(Header) < XFER_EXPORT_BLOB_BYTES, "the header leaves room for a payload");

std::uint64_t fnv1a(const unsigned char *p, std::size_t n, std::uint64_t h = 1469598103934665603ull) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::uint64_t checksum_of(Header h, const unsigned char *payload, std::size_t payload_bytes) noexcept {
    h.checksum = 0;
    return fnv1a(payload, payload_bytes, fnv1a(reinterpret_cast<const unsigned char *>(&h), sizeof h));
}

} // namespace

std::size_t payload_capacity() noexcept { return XFER_EXPORT_BLOB_BYTES - sizeof(Header); }

unsigned char *payload_of(xfer_export &out) noexcept { return out.blob + sizeof(Header); }

void seal(xfer_export &out, const std::string &backend, std::uint64_t buffer_bytes, std::size_t payload_bytes) {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.header_bytes = sizeof(Header);
    h.version = XFER_EXPORT_VERSION;
    h.buffer_bytes = buffer_bytes;
    h.payload_bytes = static_cast<std::uint32_t>(payload_bytes);
    h.fd_count = out.fd_count;
    std::strncpy(h.backend, backend.c_str(), kBackendName - 1);
    h.checksum = checksum_of(h, payload_of(out), payload_bytes);
    std::memcpy(out.blob, &h, sizeof h);
    out.version = XFER_EXPORT_VERSION;
    out.blob_bytes = static_cast<std::uint32_t>(sizeof(Header) + payload_bytes);
}

Contents open(const xfer_export &in, const std::string &backend, const char *function) {
    if (in.blob_bytes < sizeof(Header) || in.blob_bytes > XFER_EXPORT_BLOB_BYTES) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": in->blob_bytes is ", in.blob_bytes, " (an export's blob has ",
              sizeof(Header), " to ", XFER_EXPORT_BLOB_BYTES, " bytes): not an xfer export");
    }
    Header h;
    std::memcpy(&h, in.blob, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the blob is not an xfer export (no XFERBUF mark)");
    }
    if (h.version != XFER_EXPORT_VERSION || h.header_bytes != sizeof(Header)) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the blob is an export of version ", h.version, " (header ",
              h.header_bytes, " bytes); this library reads version ", XFER_EXPORT_VERSION, " (header ", sizeof(Header),
              " bytes)");
    }
    if (sizeof(Header) + std::size_t{h.payload_bytes} != in.blob_bytes) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the blob is truncated or padded: its header says ",
              sizeof(Header) + std::size_t{h.payload_bytes}, " bytes, in->blob_bytes is ", in.blob_bytes);
    }
    if (checksum_of(h, in.blob + sizeof(Header), h.payload_bytes) != h.checksum) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function,
              ": the blob's checksum does not match: it was changed after export");
    }
    if (h.fd_count != in.fd_count) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the export carries ", h.fd_count,
              " descriptor(s), in->fd_count is ", in.fd_count);
    }
    h.backend[kBackendName - 1] = '\0';
    if (backend != h.backend) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the buffer was exported by backend '", h.backend,
              "'; this context's backend is '", backend, "' (import it on a context of the same backend)");
    }
    if (h.buffer_bytes == 0 || h.buffer_bytes > static_cast<std::uint64_t>(PTRDIFF_MAX)) {
        raise(XFER_ERROR_INVALID_ARGUMENT, function, ": the blob describes a buffer of ", h.buffer_bytes, " bytes");
    }
    return Contents{h.buffer_bytes, in.blob + sizeof(Header), h.payload_bytes};
}

} // namespace xfer::core::export_blob

// SPDX-License-Identifier: Apache-2.0
// Export and import within one process (a second context maps the same memory), and every bad
// input: buffers that cannot be exported, blobs that are not exports, changed, truncated or of
// another backend, descriptors that are stale or not sealed memory of the right size, messages
// on the socket that are not exports. Each is refused with its status and a message, and
// nothing changes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "share_patterns.hpp"
#include "xfer_test/status.hpp"
#include <xfer/xfer.h>

namespace xfer::test::share {
namespace {

class ExportImport : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_XFER(XFER_SUCCESS, xfer_open("host", 0, &exporter_));
        ASSERT_XFER(XFER_SUCCESS, xfer_open("host", 0, &importer_));
        ASSERT_XFER(XFER_SUCCESS, xfer_alloc(exporter_, kBytes, XFER_ALLOC_SHAREABLE, &buf_));
        fill(static_cast<unsigned char *>(xfer_host_ptr(buf_)), kBytes, kHostSeed);
        e_.struct_size = sizeof e_;
        ASSERT_XFER(XFER_SUCCESS, xfer_buffer_export(buf_, &e_));
    }
    void TearDown() override {
        xfer_export_close(&e_);
        if (importer_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(importer_));
        if (exporter_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(exporter_));
    }
    // Imports `e` on the importer, expecting `status` and, on failure, `words` in the message.
    void import_fails(const xfer_export &e, xfer_status status, const char *words) {
        xfer_buffer b = nullptr;
        EXPECT_XFER(status, xfer_buffer_import(importer_, &e, &b));
        EXPECT_EQ(b, nullptr);
        const std::string m = xfer_last_error();
        EXPECT_NE(m.find(words), std::string::npos) << m;
    }
    // A copy of the export with its own duplicate descriptors (closed with it).
    struct Copy {
        xfer_export e;
        explicit Copy(const xfer_export &from) : e(from) {
            for (std::uint32_t i = 0; i < e.fd_count; ++i) e.fds[i] = ::fcntl(from.fds[i], F_DUPFD_CLOEXEC, 0);
        }
        ~Copy() { xfer_export_close(&e); }
    };
    xfer_context exporter_ = nullptr, importer_ = nullptr;
    xfer_buffer buf_ = nullptr;
    xfer_export e_{};
};

TEST_F(ExportImport, AnExportIsOneSealedDescriptorAndAVersionedBlob) {
    EXPECT_EQ(e_.version, unsigned{XFER_EXPORT_VERSION});
    ASSERT_EQ(e_.fd_count, 1u);
    EXPECT_GE(e_.fds[0], 0);
    EXPECT_EQ(e_.fds[1], -1);
    EXPECT_GT(e_.blob_bytes, 0u);
    EXPECT_LE(e_.blob_bytes, unsigned{XFER_EXPORT_BLOB_BYTES});
    EXPECT_NE(::fcntl(e_.fds[0], F_GETFD) & FD_CLOEXEC, 0); // never leaks into an exec'ed child
    EXPECT_EQ(::fcntl(e_.fds[0], F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW), F_SEAL_SHRINK | F_SEAL_GROW);
}

TEST_F(ExportImport, AnImportInAnotherContextIsTheSameMemoryBothWays) {
    xfer_buffer b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_import(importer_, &e_, &b));
    EXPECT_EQ(xfer_buffer_size(b), kBytes);
    auto *mine = static_cast<unsigned char *>(xfer_host_ptr(buf_));
    auto *theirs = static_cast<unsigned char *>(xfer_host_ptr(b));
    EXPECT_NE(mine, theirs); // another mapping of the same pages
    EXPECT_EQ(first_mismatch(theirs, kBytes, kHostSeed), kBytes);
    fill(theirs, kBytes, kPeerSeed);
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(b, XFER_TO_DEVICE, 0, kBytes));
    EXPECT_EQ(first_mismatch(mine, kBytes, kPeerSeed), kBytes);
    EXPECT_EQ(first_mismatch(static_cast<unsigned char *>(xfer_device_ptr(buf_)), kBytes, kPeerSeed), kBytes);
    // The exporter's free leaves the import whole; the import can itself be exported again.
    ASSERT_XFER(XFER_SUCCESS, xfer_free(buf_));
    xfer_export_close(&e_);
    EXPECT_EQ(first_mismatch(theirs, kBytes, kPeerSeed), kBytes);
    xfer_export again{};
    again.struct_size = sizeof again;
    EXPECT_XFER(XFER_SUCCESS, xfer_buffer_export(b, &again));
    xfer_export_close(&again);
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b));
}

TEST_F(ExportImport, ShareInfoSaysHostMemoryAndTheMemfdOfAShareableBuffer) {
    xfer_share_info i{};
    i.struct_size = sizeof i;
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_get_share_info(buf_, &i));
    EXPECT_EQ(i.handle_types, XFER_SHARE_HANDLE_MEMFD);
    EXPECT_STREQ(i.host_memory_kind, "system");
    EXPECT_STREQ(i.device_memory_kind, "system"); // the emulated device is host memory
    EXPECT_EQ(i.host_dlpack_device_type, 1);      // kDLCPU
    EXPECT_EQ(i.device_dlpack_device_type, 1);
    EXPECT_EQ(i.granularity, 0u);
    EXPECT_EQ(i.rdma_capable, 0);
    xfer_buffer plain = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(exporter_, 4096, XFER_ALLOC_DEFAULT, &plain));
    xfer_share_info p{};
    p.struct_size = sizeof p;
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_get_share_info(plain, &p));
    EXPECT_EQ(p.handle_types, 0u);
    EXPECT_STREQ(p.host_memory_kind, "system");
    xfer_share_info small{};
    small.struct_size = sizeof small - 1;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_get_share_info(plain, &small));
    EXPECT_NE(std::string(xfer_last_error()).find("struct_size"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(small.host_memory_kind, nullptr);
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_get_share_info(plain, nullptr));
    EXPECT_XFER(XFER_SUCCESS, xfer_free(plain));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_buffer_get_share_info(plain, &p));
}

TEST_F(ExportImport, ABufferAllocatedWithoutTheFlagIsNotExported) {
    xfer_buffer plain = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_alloc(exporter_, 4096, XFER_ALLOC_DEFAULT, &plain));
    int keep[2];
    ASSERT_EQ(0, ::pipe(keep)); // descriptors a failed export must leave open, as 0, 1 and 2
    xfer_export e{};
    e.struct_size = sizeof e;
    EXPECT_XFER(XFER_ERROR_INVALID_STATE, xfer_buffer_export(plain, &e));
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_ALLOC_SHAREABLE"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(e.fd_count, 0u);
    for (int fd : {0, 1, 2, keep[0], keep[1]}) EXPECT_NE(::fcntl(fd, F_GETFD), -1) << "descriptor " << fd << " closed";
    ::close(keep[0]);
    ::close(keep[1]);
    EXPECT_XFER(XFER_SUCCESS, xfer_free(plain));
}

TEST_F(ExportImport, BadArgumentsGetSpecificStatuses) {
    xfer_export e{};
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_export(buf_, nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_export(buf_, &e)); // struct_size 0
    e.struct_size = sizeof e;
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_buffer_export(nullptr, &e));
    xfer_buffer b = nullptr;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_import(importer_, nullptr, &b));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_buffer_import(importer_, &e_, nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_HANDLE, xfer_buffer_import(nullptr, &e_, &b));
    Copy small(e_);
    small.e.struct_size = sizeof small.e - 1;
    import_fails(small.e, XFER_ERROR_INVALID_ARGUMENT, "struct_size");
    small.e.struct_size = sizeof small.e;
    Copy many(e_);
    many.e.fd_count = XFER_EXPORT_MAX_FDS + 1;
    import_fails(many.e, XFER_ERROR_INVALID_ARGUMENT, "fd_count");
    many.e.fd_count = 1;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_export_send(-1, &e_));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_export_send(0, nullptr));
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_export_receive(0, nullptr));
    xfer_export_close(nullptr); // ignored
    xfer_export zeroed{};       // struct_size 0: ignored, descriptor 0 never closed
    xfer_export_close(&zeroed);
    EXPECT_NE(::fcntl(0, F_GETFD), -1);
}

TEST_F(ExportImport, BlobsThatAreNotExportsAreRefusedAndNothingIsMade) {
    {
        Copy c(e_);
        for (std::uint32_t i = 0; i < c.e.blob_bytes; ++i) c.e.blob[i] = static_cast<unsigned char>(i * 7 + 1);
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "not an xfer export");
    }
    {
        Copy c(e_);
        c.e.blob[c.e.blob_bytes - 1] ^= 0x40; // the payload changed after export
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "checksum");
    }
    {
        Copy c(e_);
        c.e.blob_bytes -= 1; // truncated
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "truncated");
    }
    {
        Copy c(e_);
        c.e.blob_bytes = 4; // shorter than any header
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "blob_bytes");
    }
    {
        Copy c(e_);
        c.e.blob[12] ^= 0x01; // the version field (after the 8-byte mark and the header size)
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "version");
    }
    {
        Copy c(e_);
        ::close(c.e.fds[0]);
        c.e.fds[0] = -1; // said to carry one descriptor, carries none
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "fds[0]");
        c.e.fd_count = 0;
        import_fails(c.e, XFER_ERROR_INVALID_ARGUMENT, "descriptor");
    }
}

TEST_F(ExportImport, DescriptorsThatAreNotTheBuffersMemoryAreRefused) {
    const auto with_fd = [&](int fd, const char *words) {
        xfer_export c = e_;
        c.fds[0] = fd;
        import_fails(c, XFER_ERROR_INVALID_ARGUMENT, words);
    };
    int pipe_fds[2];
    ASSERT_EQ(0, ::pipe(pipe_fds));
    with_fd(pipe_fds[0], "not a file");
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    with_fd(pipe_fds[0], "stale export"); // closed: not an open descriptor any more
    const off_t size = ::lseek(e_.fds[0], 0, SEEK_END);
    const int unsealed = ::memfd_create("not-sealed", MFD_CLOEXEC);
    ASSERT_GE(unsealed, 0);
    ASSERT_EQ(0, ::ftruncate(unsealed, size));
    with_fd(unsealed, "not sealed");
    ::close(unsealed);
    const int wrong_size = ::memfd_create("wrong-size", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_GE(wrong_size, 0);
    ASSERT_EQ(0, ::ftruncate(wrong_size, 4096));
    with_fd(wrong_size, "not the memory of a");
    ::close(wrong_size);
}

TEST_F(ExportImport, ABackendWithoutExportRefusesShareableBuffersAndImports) {
    // The mock backend of tests/core has no export entries: XFER_ALLOC_SHAREABLE allocates
    // nothing and an import is refused before the blob is read.
    xfer_context other = nullptr;
    const char *old = std::getenv("XFER_PLUGIN_PATH");
    const std::string saved = old != nullptr ? old : "";
    ::setenv("XFER_PLUGIN_PATH", XFER_TEST_MOCK_PLUGIN_DIR, 1);
    const xfer_status opened = xfer_open("mock", 0, &other);
    if (old != nullptr) {
        ::setenv("XFER_PLUGIN_PATH", saved.c_str(), 1);
    } else {
        ::unsetenv("XFER_PLUGIN_PATH");
    }
    ASSERT_XFER(XFER_SUCCESS, opened);
    xfer_buffer b = nullptr;
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_buffer_import(other, &e_, &b));
    EXPECT_XFER(XFER_ERROR_NOT_SUPPORTED, xfer_alloc(other, 4096, XFER_ALLOC_SHAREABLE, &b));
    EXPECT_NE(std::string(xfer_last_error()).find("XFER_ALLOC_SHAREABLE"), std::string::npos) << xfer_last_error();
    EXPECT_EQ(b, nullptr);
    EXPECT_XFER(XFER_SUCCESS, xfer_close(other));
}

TEST_F(ExportImport, TheSocketCarriesTheExportAndRefusesWhatIsNotOne) {
    int sv[2];
    ASSERT_EQ(0, ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
    ASSERT_XFER(XFER_SUCCESS, xfer_export_send(sv[0], &e_));
    xfer_export got{};
    got.struct_size = sizeof got;
    ASSERT_XFER(XFER_SUCCESS, xfer_export_receive(sv[1], &got));
    EXPECT_EQ(got.fd_count, 1u);
    EXPECT_NE(got.fds[0], e_.fds[0]); // a new descriptor of the same memory
    EXPECT_EQ(got.blob_bytes, e_.blob_bytes);
    EXPECT_EQ(0, std::memcmp(got.blob, e_.blob, e_.blob_bytes));
    xfer_buffer b = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_buffer_import(importer_, &got, &b));
    xfer_export_close(&got);
    EXPECT_EQ(first_mismatch(static_cast<unsigned char *>(xfer_host_ptr(b)), kBytes, kHostSeed), kBytes);
    EXPECT_XFER(XFER_SUCCESS, xfer_free(b));
    // Bytes that are not an export (as many as one, so the receiver reads them all).
    std::string junk(sizeof(xfer_export), 'j');
    ASSERT_EQ(static_cast<ssize_t>(junk.size()), ::write(sv[0], junk.data(), junk.size()));
    xfer_export none{};
    none.struct_size = sizeof none;
    EXPECT_XFER(XFER_ERROR_INVALID_ARGUMENT, xfer_export_receive(sv[1], &none));
    EXPECT_EQ(none.fd_count, 0u);
    // The peer went away.
    ::close(sv[0]);
    char drain[512];
    while (::recv(sv[1], drain, sizeof drain, MSG_DONTWAIT) > 0) {}
    EXPECT_XFER(XFER_ERROR_BACKEND, xfer_export_receive(sv[1], &none));
    EXPECT_NE(std::string(xfer_last_error()).find("closed"), std::string::npos) << xfer_last_error();
    ::close(sv[1]);
}

} // namespace
} // namespace xfer::test::share

// SPDX-License-Identifier: Apache-2.0
// A buffer shared with another process (share_peer), on share_backend() (host in CI; each CUDA
// backend that exports on a GPU machine): both views seen and written from the other side; the exporter freeing its buffer while the importer still holds it; an importer
// that dies holding it. The export travels over a socketpair, the descriptors as SCM_RIGHTS.
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "share_patterns.hpp"
#include "xfer_test/status.hpp"
#include <xfer/xfer.h>

extern char **environ;

namespace xfer::test::share {
namespace {

class Peer {
  public:
    // Starts share_peer playing `part`, with one end of a socketpair.
    explicit Peer(const char *part) {
        int fds[2] = {-1, -1};
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
        ::fcntl(fds[0], F_SETFD, FD_CLOEXEC); // ours; fds[1] is inherited
        socket_ = fds[0];
        const std::string fd = std::to_string(fds[1]);
        char *argv[] = {const_cast<char *>(XFER_SHARE_PEER), const_cast<char *>(fd.c_str()), const_cast<char *>(part),
                        nullptr};
        if (::posix_spawn(&pid_, XFER_SHARE_PEER, nullptr, nullptr, argv, environ) != 0) pid_ = -1;
        ::close(fds[1]);
    }
    ~Peer() {
        if (socket_ >= 0) ::close(socket_);
        if (pid_ > 0) (void)wait();
    }
    bool started() const { return socket_ >= 0 && pid_ > 0; }
    int socket() const { return socket_; }
    void say(char c) { ASSERT_EQ(1, ::write(socket_, &c, 1)); }
    char hear() {
        char c = 0;
        return ::read(socket_, &c, 1) == 1 ? c : '\0';
    }
    // The peer's exit status (-1: it did not exit normally).
    int wait() {
        int status = 0;
        const pid_t pid = pid_;
        pid_ = -1;
        if (::waitpid(pid, &status, 0) != pid) return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

  private:
    int socket_ = -1;
    pid_t pid_ = -1;
};

class TwoProcesses : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_XFER(XFER_SUCCESS, xfer_open(share_backend(), 0, &ctx_));
        ASSERT_XFER(XFER_SUCCESS, xfer_alloc(ctx_, kBytes, XFER_ALLOC_SHAREABLE, &buf_));
        host_ = static_cast<unsigned char *>(xfer_host_ptr(buf_));
        device_ = static_cast<unsigned char *>(xfer_device_ptr(buf_));
        fill(host_, kBytes, kDeviceSeed);
        ASSERT_XFER(XFER_SUCCESS, xfer_copy(buf_, XFER_TO_DEVICE, 0, kBytes));
        fill(host_, kBytes, kHostSeed); // the two views now differ: each is checked on its own
        export_.struct_size = sizeof export_;
        ASSERT_XFER(XFER_SUCCESS, xfer_buffer_export(buf_, &export_));
    }
    void TearDown() override {
        xfer_export_close(&export_);
        if (ctx_ != nullptr) EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx_));
    }
    xfer_context ctx_ = nullptr;
    xfer_buffer buf_ = nullptr;
    // The offset of the first byte of the device view that differs from `seed` (kBytes: none).
    std::size_t device_mismatch(unsigned seed) {
        const std::vector<unsigned char> d = read_view(ctx_, device_, kBytes);
        EXPECT_EQ(d.size(), kBytes) << xfer_last_error();
        return d.size() == kBytes ? first_mismatch(d.data(), kBytes, seed) : 0;
    }
    unsigned char *host_ = nullptr, *device_ = nullptr;
    xfer_export export_{};
};

TEST_F(TwoProcesses, TheOtherProcessSeesAndWritesBothViews) {
    Peer peer("write");
    ASSERT_TRUE(peer.started());
    ASSERT_XFER(XFER_SUCCESS, xfer_export_send(peer.socket(), &export_));
    ASSERT_EQ(peer.hear(), kWritten);
    EXPECT_EQ(peer.wait(), 0);
    // The peer wrote its host view and copied it to the device view: both are ours too.
    EXPECT_EQ(first_mismatch(host_, kBytes, kPeerSeed), kBytes);
    EXPECT_EQ(device_mismatch(kPeerSeed), kBytes);
    std::fill(host_, host_ + kBytes, 0);
    EXPECT_XFER(XFER_SUCCESS, xfer_copy(buf_, XFER_TO_HOST, 0, kBytes));
    EXPECT_EQ(first_mismatch(host_, kBytes, kPeerSeed), kBytes);
}

TEST_F(TwoProcesses, TheExportersFreeLeavesTheImportersMemory) {
    Peer peer("after-free");
    ASSERT_TRUE(peer.started());
    ASSERT_XFER(XFER_SUCCESS, xfer_export_send(peer.socket(), &export_));
    ASSERT_EQ(peer.hear(), kImported);
    xfer_export_close(&export_);
    ASSERT_XFER(XFER_SUCCESS, xfer_free(buf_));
    peer.say(kFreed);
    ASSERT_EQ(peer.hear(), kWritten); // it read kHostSeed and wrote after our free
    EXPECT_EQ(peer.wait(), 0);
}

TEST_F(TwoProcesses, AnImporterThatDiesLeavesTheExporterWhole) {
    Peer peer("die");
    ASSERT_TRUE(peer.started());
    ASSERT_XFER(XFER_SUCCESS, xfer_export_send(peer.socket(), &export_));
    EXPECT_EQ(peer.wait(), 3);
    EXPECT_EQ(first_mismatch(host_, kBytes, kHostSeed), kBytes);
    EXPECT_EQ(device_mismatch(kDeviceSeed), kBytes);
    fill(host_, kBytes, kPeerSeed);
    ASSERT_XFER(XFER_SUCCESS, xfer_copy(buf_, XFER_TO_DEVICE, 0, kBytes));
    EXPECT_EQ(device_mismatch(kPeerSeed), kBytes);
    EXPECT_XFER(XFER_SUCCESS, xfer_free(buf_));
}

} // namespace
} // namespace xfer::test::share

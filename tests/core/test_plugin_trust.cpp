// SPDX-License-Identifier: Apache-2.0
// Which plugin files the core opens: the check process's verdict whatever the application does
// with its children, and files that another user could replace.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>

#include "test_support.hpp"
#include <xfer/xfer.h>

using namespace xfer::test;
namespace fs = std::filesystem;

namespace {

class PluginTrust : public CoreTest {};

// Restores SIGCHLD's disposition at the end of a test.
class SigchldGuard {
  public:
    explicit SigchldGuard(const struct sigaction &now) { ::sigaction(SIGCHLD, &now, &before_); }
    ~SigchldGuard() { ::sigaction(SIGCHLD, &before_, nullptr); }

  private:
    struct sigaction before_ {};
};

// The plugins that end the process opening them are refused, and a good one is opened: the
// verdict cannot depend on collecting the check process's exit status. (Before, waitpid failed
// here, "cannot tell" opened the file in this process, and abort() ended the test.)
void expect_verdicts_hold() {
    EnvGuard path("XFER_PLUGIN_PATH", plugin_path({"ends", "good"}));
    for (const char *name : {"abortctor", "exitctor", "crashentry"}) {
        SCOPED_TRACE(name);
        const std::string why = reason_of(name);
        EXPECT_NE(why.find("ends the process that opens it"), std::string::npos) << why;
        xfer_context ctx = nullptr;
        EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open(name, 0, &ctx));
    }
    xfer_context ctx = nullptr;
    ASSERT_XFER(XFER_SUCCESS, xfer_open("mock", 0, &ctx));
    EXPECT_XFER(XFER_SUCCESS, xfer_close(ctx));
}

TEST_F(PluginTrust, CheckVerdictHoldsWhenTheApplicationIgnoresSigchld) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    SigchldGuard guard(ignore);
    expect_verdicts_hold();
}

// As a daemon's handler does: every child reaped, errno as the interrupted code left it.
void reap_every_child(int) {
    const int saved = errno;
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {}
    errno = saved;
}

TEST_F(PluginTrust, CheckVerdictHoldsWhenTheApplicationReapsItsChildren) {
    struct sigaction reap {};
    reap.sa_handler = reap_every_child;
    reap.sa_flags = SA_RESTART;
    SigchldGuard guard(reap);
    expect_verdicts_hold();
}

// A folder above the search folder that others may write lets them rename it and put other
// code in its place; a sticky one (as /tmp) does not.
TEST_F(PluginTrust, AFolderAboveWritableByOthersIsRefusedUnlessSticky) {
    PluginCopy copy("mock");
    EnvGuard path("XFER_PLUGIN_PATH", copy.dir());
    EnvGuard allow("XFER_PLUGIN_ALLOW_UNSAFE", std::nullopt);
    ASSERT_EQ(reason_of("mock"), "");
    const std::string above = fs::canonical(copy.root()).string();
    ::chmod(copy.root().c_str(), 0777);
    std::string why = reason_of("mock");
    EXPECT_NE(why.find("the folder " + above + " above it is writable by others (mode 0777)"), std::string::npos)
        << why;
    EXPECT_NE(why.find("XFER_PLUGIN_ALLOW_UNSAFE"), std::string::npos) << why;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open("mock", 0, &ctx));
    {
        EnvGuard yes("XFER_PLUGIN_ALLOW_UNSAFE", std::string("1"));
        EXPECT_EQ(reason_of("mock"), "");
    }
    ::chmod(copy.root().c_str(), 01777);
    EXPECT_EQ(reason_of("mock"), "");
    ::chmod(copy.root().c_str(), 0755);
}

// Files and folders that another (non-root) user owns: that user may replace them at will.
// Changing owners takes root; CI runs the suite as root.
TEST_F(PluginTrust, FilesAndFoldersOwnedByAnotherUserAreRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
    const uid_t other = 65534; // nobody
    PluginCopy copy("mock");
    EnvGuard path("XFER_PLUGIN_PATH", copy.dir());
    EnvGuard allow("XFER_PLUGIN_ALLOW_UNSAFE", std::nullopt);
    ASSERT_EQ(reason_of("mock"), "");

    ASSERT_EQ(::chown(copy.file().c_str(), other, static_cast<gid_t>(-1)), 0);
    std::string why = reason_of("mock");
    EXPECT_NE(why.find(copy.file() + " is owned by another user (uid 65534)"), std::string::npos) << why;
    ASSERT_EQ(::chown(copy.file().c_str(), 0, static_cast<gid_t>(-1)), 0);
    EXPECT_EQ(reason_of("mock"), "");

    ASSERT_EQ(::chown(copy.dir().c_str(), other, static_cast<gid_t>(-1)), 0);
    why = reason_of("mock");
    EXPECT_NE(why.find("its folder " + copy.dir() + " is owned by another user (uid 65534)"), std::string::npos) << why;
    ASSERT_EQ(::chown(copy.dir().c_str(), 0, static_cast<gid_t>(-1)), 0);

    const std::string above = fs::canonical(copy.root()).string();
    ASSERT_EQ(::chown(copy.root().c_str(), other, static_cast<gid_t>(-1)), 0);
    why = reason_of("mock");
    EXPECT_NE(why.find("the folder " + above + " above it is owned by another user (uid 65534)"), std::string::npos)
        << why;
    xfer_context ctx = nullptr;
    EXPECT_XFER(XFER_ERROR_BACKEND_UNAVAILABLE, xfer_open("mock", 0, &ctx));
    {
        EnvGuard yes("XFER_PLUGIN_ALLOW_UNSAFE", std::string("1"));
        EXPECT_EQ(reason_of("mock"), "");
    }
    ASSERT_EQ(::chown(copy.root().c_str(), 0, static_cast<gid_t>(-1)), 0);
    EXPECT_EQ(reason_of("mock"), "");
}

} // namespace

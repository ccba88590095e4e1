// SPDX-License-Identifier: Apache-2.0
// OutputFile: a file appears whole at commit() or not at all; the earlier file stays until then.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "output_file.hpp"
#include "report/report.hpp"
#include "trace.hpp"

using namespace xfer::tool;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test, removed afterwards.
class OutputFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "xfer-tool-output-file-XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto &e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
    static std::string read(const std::string &p) {
        std::ifstream in(p);
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    static void write(const std::string &p, const std::string &text) { std::ofstream(p) << text; }

    fs::path dir_;
};

} // namespace

TEST_F(OutputFileTest, TheEarlierFileStaysUntilCommit) {
    write(path("r.json"), "earlier\n");
    {
        OutputFile f(path("r.json"), "report");
        EXPECT_TRUE(f.target_existed());
        EXPECT_FALSE(f.in_place());
        EXPECT_NE(f.write_path(), f.path());
        EXPECT_EQ(fs::path(f.write_path()).parent_path(), dir_); // same folder: rename() is atomic
        f.stream() << "new\n";
        f.stream().flush();
        EXPECT_EQ(read(path("r.json")), "earlier\n");
        EXPECT_EQ(entries().size(), 2u);
        f.commit();
        EXPECT_EQ(read(path("r.json")), "new\n");
    }
    EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(OutputFileTest, WithoutCommitTheTemporaryFileGoesAndTheEarlierFileStays) {
    write(path("r.json"), "earlier\n");
    {
        OutputFile f(path("r.json"), "report");
        f.stream() << "half a report";
    }
    EXPECT_EQ(read(path("r.json")), "earlier\n");
    EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
    {
        OutputFile f(path("new.json"), "report");
        EXPECT_FALSE(f.target_existed());
    }
    EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(OutputFileTest, KeepsTheTargetsModeOrGivesTheUmasks) {
    write(path("r.json"), "earlier\n");
    ASSERT_EQ(chmod(path("r.json").c_str(), 0640), 0);
    const mode_t old_mask = umask(022);
    {
        OutputFile a(path("r.json"), "report"), b(path("fresh.json"), "report");
        a.commit();
        b.commit();
    }
    umask(old_mask);
    struct stat st {};
    ASSERT_EQ(stat(path("r.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    ASSERT_EQ(stat(path("fresh.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u); // not mkstemp's 0600
}

TEST_F(OutputFileTest, ConcurrentWritersEachLeaveAWholeFile) {
    OutputFile a(path("r.json"), "report"), b(path("r.json"), "report");
    EXPECT_NE(a.write_path(), b.write_path());
    a.stream() << std::string(1000, 'a');
    b.stream() << "b";
    a.commit();
    EXPECT_EQ(read(path("r.json")), std::string(1000, 'a'));
    b.commit(); // the last to commit wins, whole
    EXPECT_EQ(read(path("r.json")), "b");
    EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(OutputFileTest, NotAPlainFileIsWrittenInPlace) {
    OutputFile f("/dev/null", "report");
    EXPECT_TRUE(f.in_place());
    EXPECT_EQ(f.write_path(), "/dev/null");
    f.stream() << "discarded";
    f.commit();
    struct stat st {};
    ASSERT_EQ(stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));

    // A symbolic link stays a link; its target gets the content.
    write(path("target.json"), "earlier\n");
    fs::create_symlink(path("target.json"), path("link.json"));
    {
        OutputFile l(path("link.json"), "report");
        EXPECT_TRUE(l.in_place());
        l.stream() << "through the link\n";
        l.commit();
    }
    EXPECT_TRUE(fs::is_symlink(path("link.json")));
    EXPECT_EQ(read(path("target.json")), "through the link\n");
}

TEST_F(OutputFileTest, SaysWhyItCannotOpen) {
    try {
        OutputFile f("/nonexistent-dir/r.json", "report");
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(), "cannot open '/nonexistent-dir/r.json' for writing: No such file or directory");
    }
    try {
        OutputFile f("/nonexistent-dir/t.json", "trace file");
        FAIL() << "no exception";
    } catch (const std::runtime_error &e) {
        EXPECT_STREQ(e.what(),
                     "cannot open trace file '/nonexistent-dir/t.json' for writing: No such file or directory");
    }
}

TEST_F(OutputFileTest, ReportsAndTracesAppearOnlyWhenComplete) {
    write(path("r.csv"), "earlier\n");
    {
        ReportStream s("csv", path("r.csv"), TableStyle::compact, false);
        Report report;
        s.begin(report);
        EXPECT_EQ(read(path("r.csv")), "earlier\n"); // streamed into the temporary file
        s.finish(report);
        EXPECT_EQ(read(path("r.csv")), "earlier\n");
        s.commit();
    }
    EXPECT_NE(read(path("r.csv")), "earlier\n");
    Tracer t;
    t.write(path("t.json"));
    EXPECT_TRUE(nlohmann::json::parse(read(path("t.json"))).contains("traceEvents"));
    EXPECT_EQ(entries(), (std::vector<std::string>{"r.csv", "t.json"}));
}

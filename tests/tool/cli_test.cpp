// Command-line and configuration-file parsing of xfer-tool.
#include "cli.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

using namespace xfer_tool;

namespace {

Invocation parse(std::vector<std::string> args)
{
    unsetenv("XFER_CONFIG");
    return parse_command_line(args);
}

std::string usage_error(std::vector<std::string> args)
{
    try {
        parse(args);
    } catch (const UsageError &e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(Cli, RunAllExpandsToEveryWorkflowInOrder)
{
    Invocation inv = parse({"run", "all", "--backend", "host"});
    ASSERT_EQ(inv.command, Command::run);
    EXPECT_EQ(inv.run.workflows, (std::vector<std::string>{"roundtrip", "sync-async", "bandwidth", "vector-add",
                                                           "overlap", "batching", "access"}));
    EXPECT_EQ(inv.run.backends, (std::vector<std::string>{"host"}));
    EXPECT_FALSE(inv.run.all_backends);
}

TEST(Cli, DefaultsAreThoseOfTheIssue)
{
    Invocation inv = parse({"run", "bandwidth"});
    EXPECT_EQ(inv.run.repeats, 20);
    EXPECT_EQ(inv.run.streams, 3);
    EXPECT_EQ(inv.run.copies, 4096u);
    EXPECT_EQ(inv.run.copy_size, 4096u);
    EXPECT_EQ(inv.run.stride, 32u);
    EXPECT_EQ(inv.run.size, 256u << 20);
    ASSERT_EQ(inv.run.sizes.size(), 11u);
    EXPECT_EQ(inv.run.sizes.front(), 1024u);
    EXPECT_EQ(inv.run.sizes.back(), 1u << 30);
    EXPECT_EQ(inv.run.format, "table");
    EXPECT_TRUE(inv.run.backends.empty());
    EXPECT_EQ(inv.run.device, -1);
}

TEST(Cli, OptionsAreParsedWithUnits)
{
    Invocation inv = parse({"run", "roundtrip,access", "-b", "pinned,pageable", "--backend", "managed", "--size", "4MiB",
                            "--sizes", "1KiB,1MB", "-r", "5", "--warmup", "0", "--copies", "16", "--copy-size", "1KB",
                            "--stride", "8", "--seed", "7", "-f", "json", "-o", "out.json", "--trace", "t.json", "-q"});
    EXPECT_EQ(inv.run.workflows, (std::vector<std::string>{"roundtrip", "access"}));
    EXPECT_EQ(inv.run.backends, (std::vector<std::string>{"pinned", "pageable", "managed"}));
    EXPECT_EQ(inv.run.size, 4u << 20);
    EXPECT_EQ(inv.run.sizes, (std::vector<std::uint64_t>{1024, 1000000}));
    EXPECT_EQ(inv.run.repeats, 5);
    EXPECT_EQ(inv.run.warmup, 0);
    EXPECT_EQ(inv.run.copies, 16u);
    EXPECT_EQ(inv.run.copy_size, 1000u);
    EXPECT_EQ(inv.run.stride, 8u);
    EXPECT_EQ(inv.run.seed, 7u);
    EXPECT_EQ(inv.run.format, "json");
    EXPECT_EQ(inv.run.output, "out.json");
    EXPECT_EQ(inv.run.trace, "t.json");
    EXPECT_TRUE(inv.run.quiet);
}

TEST(Cli, BackendAllAndCompareDefaults)
{
    Invocation run = parse({"run", "all", "--backend", "all"});
    EXPECT_TRUE(run.run.all_backends);
    Invocation cmp = parse({"compare"});
    ASSERT_EQ(cmp.command, Command::compare);
    EXPECT_EQ(cmp.run.workflows.size(), 7u);
}

TEST(Cli, PeerIsNamedNotPartOfAllAndDeviceAllRunsEveryDevice)
{
    Invocation inv = parse({"run", "all", "peer", "--device", "all"});
    EXPECT_EQ(inv.run.workflows.size(), 8u);
    EXPECT_EQ(inv.run.workflows.back(), "peer");
    EXPECT_TRUE(inv.run.all_devices);
    EXPECT_EQ(inv.run.device, -1);
    Invocation one = parse({"run", "peer", "--device", "1"});
    EXPECT_FALSE(one.run.all_devices);
    EXPECT_EQ(one.run.device, 1);
    EXPECT_EQ(usage_error({"run", "peer", "--device", "some"}), "--device: 'some' is not an integer");
}

TEST(Cli, BadInputSaysWhatIsWrong)
{
    EXPECT_EQ(usage_error({"frobnicate"}), "unknown command 'frobnicate' (commands: list, run, compare, plot)");
    EXPECT_EQ(usage_error({"run"}),
              "run needs a workflow: all, roundtrip, sync-async, bandwidth, vector-add, overlap, batching, access, peer");
    EXPECT_EQ(usage_error({"run", "nope"}), "unknown workflow 'nope' (workflows: all, roundtrip, sync-async, bandwidth, "
                                            "vector-add, overlap, batching, access, peer)");
    EXPECT_EQ(usage_error({"run", "all", "--size", "12XB"}),
              "--size: '12XB' has an unknown unit 'XB' (use e.g. 4096, 4KiB, 256MiB, 1GiB, or 1GB = 10^9 bytes)");
    EXPECT_EQ(usage_error({"run", "all", "--repeats", "0"}), "--repeats: 0 is below the minimum 1");
    EXPECT_EQ(usage_error({"run", "all", "--streams", "two"}), "--streams: 'two' is not an integer");
    EXPECT_EQ(usage_error({"run", "all", "--format", "xml"}), "--format: unknown format 'xml' (use table, csv or json)");
    EXPECT_EQ(usage_error({"run", "all", "--backend", "all,host"}), "--backend: 'all' cannot be combined with backend names");
    EXPECT_NE(usage_error({"run", "all", "--bogus"}).find("unrecognised option '--bogus'"), std::string::npos);
    EXPECT_EQ(usage_error({"plot", "r.json"}), "plot needs -o FILE.png or -o FILE.svg");
    EXPECT_EQ(usage_error({"plot", "-o", "x.png"}), "plot needs exactly one RESULTS.json");
}

TEST(Cli, HelpListsEveryWorkflowAndOptionWithDefaults)
{
    Invocation top = parse({"--help"});
    EXPECT_EQ(top.command, Command::help);
    Invocation run = parse({"run", "--help"});
    EXPECT_EQ(run.command, Command::help);
    for (const std::string *text : {&top.help_text, &run.help_text}) {
        for (const char *wf : {"roundtrip", "sync-async", "bandwidth", "vector-add", "overlap", "batching", "access",
                               "peer"})
            EXPECT_NE(text->find(std::string("  ") + wf + " "), std::string::npos) << wf;
        for (const char *opt : {"--size ] SIZE (=256MiB)", "--sizes LIST|FROM:TO[:FACTOR] (=1KiB:1GiB:4)",
                                "--repeats ] N (=20)", "--warmup N (=2)", "--batches N (=8)", "--streams N (=3)",
                                "--copies N (=4096)", "--copy-size SIZE (=4KiB)", "--stride N (=32)",
                                "--format ] table|csv|json (=table)", "--output ] FILE", "--trace FILE", "--config FILE",
                                "--backend ]", "--device ] N|all (=-1)", "--seed N", "--quiet ]"})
            EXPECT_NE(text->find(opt), std::string::npos) << opt;
    }
}

TEST(ConfigSection, FillsWhatTheCommandLineLeftUnset)
{
    RunOptions o;
    std::istringstream file("backend = pinned\n"
                            "[pageable]\n"
                            "chunk_size = 8MiB\n"
                            "[xfer-tool]\n"
                            "repeats = 7\n"
                            "size = 64MiB\n"
                            "format = csv\n");
    apply_config_section(file, "test.ini", {"format"}, o);
    EXPECT_EQ(o.repeats, 7);
    EXPECT_EQ(o.size, 64u << 20);
    EXPECT_EQ(o.format, "table"); // set on the command line: the file does not override it
    EXPECT_TRUE(o.backends.empty()); // the top-level backend key is the library's
}

TEST(ConfigSection, UnknownKeysAndBadValuesAreErrors)
{
    RunOptions o;
    std::istringstream unknown("[xfer-tool]\nrepeat = 3\n");
    try {
        apply_config_section(unknown, "test.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_STREQ(e.what(), "unknown key [xfer-tool] repeat in test.ini");
    }
    std::istringstream bad("[xfer-tool]\nsize = lots\n");
    try {
        apply_config_section(bad, "test.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_NE(std::string(e.what()).find("[xfer-tool] size in test.ini: 'lots' is not a size"), std::string::npos)
            << e.what();
    }
}

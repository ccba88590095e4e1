// SPDX-License-Identifier: Apache-2.0
// Command-line and configuration-file parsing of xfer-tool.
#include <cstdlib>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "cli.hpp"
#include "short_options.hpp"

using namespace xfer::tool;

namespace {

Invocation parse(std::vector<std::string> args) {
    unsetenv("XFER_CONFIG");
    return parse_command_line(args);
}

std::string usage_error(std::vector<std::string> args) {
    try {
        parse(args);
    } catch (const UsageError &e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(Cli, RunAllExpandsToEveryWorkflowInOrder) {
    Invocation inv = parse({"run", "all", "--backend", "host"});
    ASSERT_EQ(inv.command, Command::run);
    EXPECT_EQ(inv.run.workflows, (std::vector<std::string>{"roundtrip", "sync-async", "bandwidth", "vector-add",
                                                           "overlap", "batching", "access"}));
    EXPECT_EQ(inv.run.backends, (std::vector<std::string>{"host"}));
    EXPECT_FALSE(inv.run.all_backends);
}

TEST(Cli, DefaultsAreThoseOfTheIssue) {
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

TEST(Cli, OptionsAreParsedWithUnits) {
    Invocation inv = parse({"run",         "roundtrip,access",
                            "--backend",   "pinned,pageable",
                            "--backend",   "managed",
                            "--size",      "4MiB",
                            "--sizes",     "1KiB,1MB",
                            "-r",          "5",
                            "-w",          "0",
                            "--copies",    "16",
                            "--copy-size", "1KB",
                            "--stride",    "8",
                            "--seed",      "7",
                            "--format",    "json",
                            "-o",          "out.json",
                            "--trace",     "t.json",
                            "-q"});
    EXPECT_EQ(inv.run.workflows, (std::vector<std::string>{"roundtrip", "access"}));
    EXPECT_EQ(inv.run.backends, (std::vector<std::string>{"pinned", "pageable", "managed"}));
    EXPECT_EQ(inv.run.size, 4u << 20);
    EXPECT_EQ(inv.run.sizes, (std::vector<std::uint64_t>{1024, 1000000}));
    EXPECT_EQ(inv.run.repeats, 5);
    EXPECT_TRUE(inv.run.fixed_repeats);
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

// One set of short options: the letters bench and calibrate take mean the same in run and compare.
TEST(Cli, ShortOptionsAreThoseOfEveryCommand) {
    for (const char *command : {"run", "compare"}) {
        Invocation inv = parse({command, "roundtrip", "-b", "host", "-d", "1", "-f", "csv", "-o", "r.csv", "-r", "3",
                                "-w", "0", "-s", "1MiB", "-q"});
        EXPECT_EQ(inv.run.backends, (std::vector<std::string>{"host"})) << command;
        EXPECT_EQ(inv.run.device, 1) << command;
        EXPECT_EQ(inv.run.format, "csv") << command;
        EXPECT_EQ(inv.run.output, "r.csv") << command;
        EXPECT_EQ(inv.run.repeats, 3) << command;
        EXPECT_TRUE(inv.run.fixed_repeats) << command;
        EXPECT_EQ(inv.run.warmup, 0) << command;
        EXPECT_EQ(inv.run.size, 1u << 20) << command;
        EXPECT_TRUE(inv.run.quiet) << command;
    }
    EXPECT_EQ(parse({"plot", "r.json", "-o", "bw.png"}).plot.output, "bw.png");
}

TEST(Cli, NoLetterHasTwoMeanings) {
    std::set<char> letters;
    std::set<std::string> names;
    for (const auto &[name, letter] : short_options()) {
        EXPECT_TRUE(letters.insert(letter).second) << "-" << letter << " is taken twice";
        EXPECT_TRUE(names.insert(name).second) << "--" << name << " has two letters";
    }
    EXPECT_EQ(option_key("backend"), "backend,b");
    EXPECT_EQ(option_key("repeats"), "repeats,r");
    EXPECT_EQ(option_key("seed"), "seed");
}

TEST(Cli, CsvMetadataIsOptIn) {
    EXPECT_FALSE(parse({"run", "roundtrip", "--format", "csv"}).run.csv_metadata);
    EXPECT_TRUE(parse({"run", "roundtrip", "--format", "csv", "--csv-metadata"}).run.csv_metadata);
}

TEST(Cli, BackendAllAndCompareDefaults) {
    Invocation run = parse({"run", "all", "--backend", "all"});
    EXPECT_TRUE(run.run.all_backends);
    Invocation cmp = parse({"compare"});
    ASSERT_EQ(cmp.command, Command::compare);
    EXPECT_EQ(cmp.run.workflows.size(), 7u);
}

TEST(Cli, PeerIsNamedNotPartOfAllAndDeviceAllRunsEveryDevice) {
    Invocation inv = parse({"run", "all", "peer", "--device", "all"});
    EXPECT_EQ(inv.run.workflows.size(), 8u);
    EXPECT_EQ(inv.run.workflows.back(), "peer");
    EXPECT_TRUE(inv.run.all_devices);
    EXPECT_EQ(inv.run.device, -1);
    Invocation one = parse({"run", "peer", "--device", "1"});
    EXPECT_FALSE(one.run.all_devices);
    EXPECT_EQ(one.run.device, 1);
    EXPECT_EQ(usage_error({"run", "peer", "--device", "some"}),
              "--device: 'some' is not an integer (not a whole number)");
}

TEST(Cli, BadInputSaysWhatIsWrong) {
    EXPECT_EQ(usage_error({"frobnicate"}),
              "unknown command 'frobnicate' (commands: list, run, compare, plot, diff, bench, calibrate)");
    EXPECT_EQ(
        usage_error({"run"}),
        "run needs a workflow: all, roundtrip, sync-async, bandwidth, vector-add, overlap, batching, access, peer");
    EXPECT_EQ(usage_error({"run", "nope"}),
              "unknown workflow 'nope' (workflows: all, roundtrip, sync-async, bandwidth, "
              "vector-add, overlap, batching, access, peer)");
    EXPECT_EQ(usage_error({"run", "all", "--size", "12XB"}),
              "--size: '12XB': unknown size unit 'XB' (use B, KiB, MiB, GiB, TiB = powers of 1024, or KB, MB, GB, TB = "
              "powers of 1000)");
    // The library's grammar: what a configuration file refuses, the tool refuses too.
    EXPECT_EQ(usage_error({"run", "all", "--size", "1.5GiB"}),
              "--size: '1.5GiB': fractional sizes are not supported (write 1536MiB, not 1.5GiB)");
    EXPECT_EQ(usage_error({"run", "all", "--direction", "up"}),
              "--direction: unknown direction 'up' (use h2d, d2h, bidir)");
    EXPECT_EQ(usage_error({"run", "all", "--seed", "-1"}),
              "--seed: '-1' is not a seed (a whole number from 0 to 2^64-1)");
    EXPECT_NE(usage_error({"run", "all", "-n", "5"}).find("unrecognised option '-n'"), std::string::npos);
    EXPECT_EQ(usage_error({"diff", "a.json"}), "diff needs two reports: A.json B.json");
    EXPECT_EQ(usage_error({"plot", "--kind", "pie", "t.json", "-o", "x.png"}),
              "--kind: unknown plot kind 'pie' (use bandwidth or overlap)");
    EXPECT_EQ(usage_error({"run", "all", "--repeats", "0"}), "--repeats: 0 is below the minimum 1");
    EXPECT_EQ(usage_error({"run", "all", "--streams", "two"}),
              "--streams: 'two' is not an integer (not a whole number)");
    EXPECT_EQ(usage_error({"run", "all", "--format", "xml"}),
              "--format: unknown format 'xml' (use table, csv or json)");
    EXPECT_EQ(usage_error({"run", "all", "--backend", "all,host"}),
              "--backend: 'all' cannot be combined with backend names");
    EXPECT_NE(usage_error({"run", "all", "--bogus"}).find("unrecognised option '--bogus'"), std::string::npos);
    EXPECT_EQ(usage_error({"plot", "r.json"}), "plot needs -o FILE.png or -o FILE.svg");
    EXPECT_EQ(usage_error({"plot", "-o", "x.png"}),
              "plot needs exactly one RESULTS.json (or TRACE.json with --kind overlap)");
}

TEST(Cli, HelpListsEveryWorkflowAndOptionWithDefaults) {
    Invocation top = parse({"--help"});
    EXPECT_EQ(top.command, Command::help);
    Invocation run = parse({"run", "--help"});
    EXPECT_EQ(run.command, Command::help);
    for (const std::string *text : {&top.help_text, &run.help_text}) {
        for (const char *wf :
             {"roundtrip", "sync-async", "bandwidth", "vector-add", "overlap", "batching", "access", "peer"})
            EXPECT_NE(text->find(std::string("  ") + wf + " "), std::string::npos) << wf;
        for (const char *opt : {"--size ] SIZE (=256MiB)",
                                "--sizes LIST|FROM:TO[:FACTOR|:+STEP] (=1KiB:1GiB:4)",
                                "--repeats ] N (=20)",
                                "--warmup ] N (=2)",
                                "--batches N (=8)",
                                "--streams N (=3)",
                                "--copies N (=4096)",
                                "--copy-size SIZE (=4KiB)",
                                "--stride N (=32)",
                                "-f [ --format ] table|csv|json (=table)",
                                "--output ] FILE",
                                "--trace FILE",
                                "--config FILE",
                                "-b [ --backend ] NAME",
                                "-d [ --device ] N|all (=-1)",
                                "--seed N",
                                "--quiet ]",
                                "--quick",
                                "--direction h2d,d2h,bidir (=h2d,d2h,bidir)",
                                "--samples",
                                "--csv-metadata",
                                "--long",
                                "--log-copies"})
            EXPECT_NE(text->find(opt), std::string::npos) << opt;
    }
}

TEST(ConfigSection, FillsWhatTheCommandLineLeftUnset) {
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
    EXPECT_EQ(o.format, "table");    // set on the command line: the file does not override it
    EXPECT_TRUE(o.backends.empty()); // the top-level backend key is the library's
}

TEST(ConfigSection, UnknownKeysAndBadValuesAreErrors) {
    RunOptions o;
    std::istringstream unknown("[xfer-tool]\nrepeat = 3\n");
    try {
        apply_config_section(unknown, "test.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_STREQ(e.what(), "test.ini:2: [xfer-tool] repeat: unknown key");
    }
    std::istringstream bad("[xfer-tool]\nsize = lots\n");
    try {
        apply_config_section(bad, "test.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_EQ(std::string(e.what()),
                  "test.ini:2: [xfer-tool] size: 'lots': a size must start with a whole number of bytes (e.g. 4096, "
                  "8MiB, 1GB)");
    }
}

TEST(ConfigSection, ErrorsNameTheLineAsTheLibraryDoes) {
    RunOptions o;
    std::istringstream fraction("backend = host\n\n[xfer-tool]\nrepeats = 3\nsize = 1.5GiB\n");
    try {
        apply_config_section(fraction, "x.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_EQ(
            std::string(e.what()),
            "x.ini:5: [xfer-tool] size: '1.5GiB': fractional sizes are not supported (write 1536MiB, not 1.5GiB)");
    }
    std::istringstream malformed("[xfer-tool]\nrepeats 3\n");
    try {
        apply_config_section(malformed, "x.ini", {}, o);
        FAIL() << "no exception";
    } catch (const UsageError &e) {
        EXPECT_NE(std::string(e.what()).find("x.ini:2: malformed line 'repeats 3'"), std::string::npos) << e.what();
    }
    std::istringstream fixed("[xfer-tool]\nrepeats = 4\n");
    RunOptions p;
    apply_config_section(fixed, "x.ini", {}, p);
    EXPECT_EQ(p.repeats, 4);
    EXPECT_TRUE(p.fixed_repeats); // set in the file: no early stop
}

TEST(Cli, QuickLowersTheDefaultsButNotExplicitOptions) {
    Invocation q = parse({"compare", "--quick", "--size", "1MiB"});
    EXPECT_TRUE(q.run.quick);
    EXPECT_EQ(q.run.size, 1u << 20); // explicit wins
    EXPECT_EQ(q.run.repeats, 5);
    EXPECT_FALSE(q.run.fixed_repeats);
    EXPECT_EQ(q.run.warmup, 1);
    EXPECT_EQ(q.run.sizes, (std::vector<std::uint64_t>{4096, 65536, 1u << 20, 16u << 20}));
    Invocation d = parse({"compare"});
    EXPECT_FALSE(d.run.quick);
    EXPECT_FALSE(d.run.fixed_repeats); // adaptive by default
}

TEST(Cli, DirectionsSamplesLongAndSeed) {
    Invocation inv = parse({"run", "bandwidth", "--direction", "d2h,h2d", "--samples", "--csv-metadata", "--long",
                            "--seed", "18446744073709551615"});
    EXPECT_EQ(inv.run.directions, (std::vector<std::string>{"d2h", "h2d"}));
    EXPECT_TRUE(inv.run.has_direction("h2d"));
    EXPECT_FALSE(inv.run.has_direction("bidir"));
    EXPECT_TRUE(inv.run.samples);
    EXPECT_TRUE(inv.run.long_table);
    EXPECT_EQ(inv.run.seed, 18446744073709551615ull);
    EXPECT_EQ(parse({"run", "bandwidth"}).run.directions, (std::vector<std::string>{"h2d", "d2h", "bidir"}));
}

TEST(Cli, LogCopiesIsOffUnlessAsked) {
    EXPECT_FALSE(parse({"run", "roundtrip"}).run.log_copies);
    EXPECT_TRUE(parse({"run", "roundtrip", "--log-copies"}).run.log_copies);
    EXPECT_TRUE(parse({"compare", "--log-copies"}).run.log_copies);
}

TEST(Cli, DiffAndPlotKinds) {
    Invocation d = parse({"diff", "a.json", "b.json", "--all"});
    ASSERT_EQ(d.command, Command::diff);
    EXPECT_EQ(d.diff.before, "a.json");
    EXPECT_EQ(d.diff.after, "b.json");
    EXPECT_TRUE(d.diff.all);
    Invocation p = parse({"plot", "--kind", "overlap", "t.json", "-o", "t.png"});
    ASSERT_EQ(p.command, Command::plot);
    EXPECT_EQ(p.plot.kind, "overlap");
    EXPECT_EQ(parse({"plot", "r.json", "-o", "r.png"}).plot.kind, "bandwidth");
}

// SPDX-License-Identifier: Apache-2.0
// `xfer-tool bench [OPTIONS]`: its options, the choice of targets, the run, the report.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>
#include <boost/program_options.hpp>

#include "bench/bench.hpp"
#include "bench/bench_env.hpp"
#include "bench/bench_report.hpp"
#include "bench/targets.hpp"
#include "commands.hpp"
#include "interrupt.hpp"
#include "output_file.hpp"
#include "report/report.hpp"
#include "run_info.hpp"
#include "short_options.hpp"
#include "text_table.hpp"

namespace po = boost::program_options;

namespace xfer::tool {
namespace {

const char *const kHint = "Try 'xfer-tool bench --help'.";

po::options_description bench_description() {
    const BenchOptions defaults;
    po::options_description d("Options of 'bench'", 100, 50);
    d.add_options()(option_key("backend").c_str(),
                    po::value<std::vector<std::string>>()->composing()->value_name("NAME[,NAME...]"),
                    "run the targets about these backends (pinned, pageable, managed, zerocopy; host = the smoke set). "
                    "Default: every CUDA target when a CUDA backend is available, else the smoke set on host")(
        option_key("targets").c_str(), po::value<std::vector<std::string>>()->composing()->value_name("NAME[,NAME...]"),
        "run only these targets: names or shell patterns ('pageable-raw-*'); see --list")(
        option_key("repeats").c_str(), po::value<int>()->default_value(defaults.repeats)->value_name("N"),
        "timed pairs per target; the verdict uses the median of the per-pair ratios")(
        option_key("warmup").c_str(), po::value<int>()->default_value(defaults.warmup)->value_name("N"),
        "untimed pairs first")(option_key("device").c_str(),
                               po::value<int>()->default_value(defaults.device)->value_name("N"),
                               "device index; -1 = XFER_DEVICE / the config file's device key / 0")(
        "seed", po::value<std::uint64_t>()->value_name("N"),
        "seed of the random data. Default: a random seed (reported)")(
        option_key("format").c_str(),
        po::value<std::string>()->default_value(defaults.format)->value_name("table|json"),
        "report format")(option_key("output").c_str(), po::value<std::string>()->value_name("FILE"),
                         "write the report to FILE (opened before anything is measured; it replaces an earlier "
                         "FILE only once complete). Default: stdout")(
        "config", po::value<std::string>()->value_name("FILE"),
        "configuration file, as the library reads it (sets XFER_CONFIG). Default: $XFER_CONFIG")(
        "list", po::bool_switch(), "list the targets (name, backend, target ratio, what is compared) and exit")(
        option_key("quiet").c_str(), po::bool_switch(),
        "no progress indicator (it shows only when stderr is a terminal)")(option_key("help").c_str(),
                                                                           "show this help");
    return d;
}

// "a,b" "c" -> a, b, c (empty items dropped).
std::vector<std::string> names(const std::vector<std::string> &items) {
    std::vector<std::string> out;
    for (const std::string &item : items) {
        std::vector<std::string> parts;
        boost::algorithm::split(parts, item, boost::algorithm::is_any_of(","));
        std::copy_if(parts.begin(), parts.end(), std::back_inserter(out),
                     [](const std::string &p) { return !p.empty(); });
    }
    return out;
}

std::string bench_help() {
    std::ostringstream text;
    text << "Usage: xfer-tool bench [--backend NAME...] [--targets NAME...] [OPTIONS]\n\n"
         << "Runs every performance target side by side in one process: xfer's path and the raw path it must\n"
         << "match (the raw CUDA call on the same memory, another backend, or std::memcpy on host), alternating,\n"
         << "warm-up first, then --repeats pairs. One line per target: both figures (medians), the median of the\n"
         << "per-pair ratios, the target ratio, and PASS / FAIL. Every result is verified byte for byte; a failed\n"
         << "verification is FAIL whatever the speed. Without a GPU it runs a smoke set on host, judged by\n"
         << "completing and verifying ('smoke'), not by timing.\n\n"
         << bench_description() << "\n"
         << "Exit status: 0 every target PASS (or smoke); 1 a result failed verification; 2 bad command line;\n"
         << "3 an error (a backend could not be opened, a call failed); 4 a target missed its ratio; 130 / 143\n"
         << "stopped by SIGINT (Ctrl-C) / SIGTERM after the measurement under way (an earlier -o FILE is kept).\n";
    return text.str();
}

// Parses the options; returns false (after printing the help) for --help.
bool parse(const std::vector<std::string> &args, BenchOptions &o) {
    const po::options_description d = bench_description();
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(d).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), kHint);
    }
    if (vm.count("help")) {
        std::fputs(bench_help().c_str(), stdout);
        return false;
    }
    if (vm.count("backend")) o.backends = names(vm["backend"].as<std::vector<std::string>>());
    if (vm.count("targets")) o.targets = names(vm["targets"].as<std::vector<std::string>>());
    o.repeats = vm["repeats"].as<int>();
    o.warmup = vm["warmup"].as<int>();
    o.device = vm["device"].as<int>();
    if (o.repeats < 1) throw UsageError("--repeats: " + std::to_string(o.repeats) + " is below the minimum 1", kHint);
    if (o.warmup < 0) throw UsageError("--warmup: " + std::to_string(o.warmup) + " is below the minimum 0", kHint);
    if (o.device < -1) throw UsageError("--device: " + std::to_string(o.device) + " is below the minimum -1", kHint);
    if (vm.count("seed")) {
        o.seed = vm["seed"].as<std::uint64_t>();
    } else {
        std::random_device rd;
        o.seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    }
    o.format = vm["format"].as<std::string>();
    if (o.format != "table" && o.format != "json")
        throw UsageError("--format: unknown format '" + o.format + "' (use table or json)", kHint);
    if (vm.count("output")) o.output = vm["output"].as<std::string>();
    if (vm.count("config")) o.config = vm["config"].as<std::string>();
    o.list = vm["list"].as<bool>();
    o.quiet = vm["quiet"].as<bool>();
    return true;
}

// A CUDA backend is available: the full table applies.
bool gpu_available() {
    int count = 0;
    check(xfer_backend_count(&count), "xfer_backend_count");
    for (int i = 0; i < count; ++i) {
        xfer_backend_info info{};
        check(xfer_backend_get_info(i, &info), "xfer_backend_get_info");
        if (info.available && info.device_kind == XFER_DEVICE_KIND_CUDA) return true;
    }
    return false;
}

void list_targets(const std::vector<const TargetSpec *> &targets) {
    TextTable table({{"target"}, {"backend"}, {"target"}, {"what is compared"}});
    for (const TargetSpec *t : targets) {
        BenchRow row;
        row.goal = t->goal;
        table.add_row({t->name, t->backend, goal_text(row), t->summary});
    }
    table.print(std::cout);
}

BenchRow run_target(BenchEnv &env, const TargetSpec &t) {
    BenchRow row;
    row.target = t.name;
    row.backend = t.backend;
    row.summary = t.summary;
    row.bytes = t.bytes;
    row.goal = t.goal;
    try {
        t.measure(env, row);
    } catch (const std::exception &e) {
        // A call that failed because the process was told to stop is the interrupt's doing.
        throw_if_interrupted();
        row.error = e.what();
    }
    return row;
}

int exit_status(const BenchReport &report) {
    const std::map<Verdict, int> n = count_verdicts(report);
    bool verification_failed = false;
    for (const BenchRow &row : report.rows)
        verification_failed = verification_failed || row.verification.state == Verification::State::failed;
    if (verification_failed) return kExitVerificationFailed;
    if (n.count(Verdict::error)) return kExitError;
    if (n.count(Verdict::fail)) return kExitTargetMissed;
    return kExitOk;
}

} // namespace

int run_bench_command(const std::vector<std::string> &args, const std::string &command_line) {
    BenchOptions o;
    if (!parse(args, o)) return kExitOk;
    use_config_file(o.config);
    std::vector<const TargetSpec *> targets;
    try {
        const bool gpu = o.backends.empty() && o.targets.empty() ? gpu_available() : false;
        targets = select_targets(o.backends, o.targets, gpu);
    } catch (const std::invalid_argument &e) {
        throw UsageError(e.what(), kHint);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return kExitError;
    }
    if (o.list) {
        list_targets(targets);
        return kExitOk;
    }

    // The output is opened before anything is measured (a bad path costs nothing) and is a
    // temporary file until the report is complete: an interrupt or error leaves an earlier
    // report at that path as it was.
    std::unique_ptr<OutputFile> file;
    try {
        if (!o.output.empty()) file = std::make_unique<OutputFile>(o.output, "report");
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return kExitError;
    }
    auto interrupted = [&](const Interrupted &i) {
        std::cout.flush();
        return report_interrupted(i.signal, {file.get()}, file ? "" : "no report was written");
    };

    BenchReport report;
    report.tool_version = XFER_TOOL_VERSION;
    report.library_version = library_version();
    report.repeats = o.repeats;
    report.warmup = o.warmup;
    report.seed = o.seed;
    report.run = collect_machine_info(command_line, o.seed);
    auto option = [&](const char *name, const std::string &value) {
        report.run.config.push_back({"xfer-tool", name, value, ""});
    };
    std::string names;
    for (const TargetSpec *t : targets) names += (names.empty() ? "" : ",") + t->name;
    option("targets", names);
    option("repeats", std::to_string(o.repeats));
    option("warmup", std::to_string(o.warmup));
    option("config", o.config);
    try {
        Progress progress(!o.quiet && Progress::stderr_is_terminal());
        progress.set_total(static_cast<int>(targets.size()));
        BenchEnv env(o, progress);
        std::set<std::string> said; // each distinct error once on stderr; every row has it in the report
        for (const TargetSpec *t : targets) {
            throw_if_interrupted();
            progress.begin_step(t->name);
            report.rows.push_back(run_target(env, *t));
            const BenchRow &row = report.rows.back();
            if (verdict(row) == Verdict::error || row.verification.state == Verification::State::failed) {
                const std::string what =
                    row.error.empty() ? "verification FAILED: " + row.verification.detail : row.error;
                if (said.insert(what).second) {
                    progress.clear();
                    std::fprintf(stderr, "xfer-tool: bench %s: %s\n", row.target.c_str(), what.c_str());
                }
            }
        }
        report.device = env.device();
        progress.clear();
    } catch (const Interrupted &i) {
        return interrupted(i);
    }
    const int status = exit_status(report);
    try {
        std::ostream &out = file ? file->stream() : std::cout;
        if (o.format == "json")
            out << bench_to_json(report).dump(2) << '\n';
        else
            write_bench_table(out, report);
        out.flush();
        if (!out)
            throw std::runtime_error("cannot write the report to '" + (o.output.empty() ? "stdout" : o.output) + "'");
        if (file) {
            throw_if_interrupted(); // the last point to stop at: past it, the report takes its place
            file->commit();
        }
        // A machine report went to a file: the terminal still gets the summary.
        if (file) std::printf("%s\n", summary_line(report).c_str());
    } catch (const Interrupted &i) {
        return interrupted(i);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "xfer-tool: %s\n", e.what());
        return status == kExitOk ? kExitError : status;
    }
    return status;
}

} // namespace xfer::tool

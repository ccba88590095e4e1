// SPDX-License-Identifier: Apache-2.0
#include "cli.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include <boost/program_options.hpp>

#include "short_options.hpp"
#include "units.hpp"
#include "workflows/workflow.hpp"
#include "xfer_config/config_file.hpp"
#include "xfer_config/value_parse.hpp" // the library's grammar (xfer_config_grammar)

namespace po = boost::program_options;

namespace xfer::tool {
namespace {

constexpr const char *kSection = "xfer-tool";

// Every run/compare option once: the command line and the config file section share it.
// Short letters come from short_options.cpp, the one set every command uses.
struct OptionSpec {
    const char *name;
    const char *value_name;
    const char *default_text; // "" for none (the help says what happens)
    const char *quick_text;   // the default under --quick ("" = the same as default_text)
    const char *help;
};

std::string plain(double v) // 0.25, 1: shortest form
{
    std::ostringstream out;
    out << v;
    return out.str();
}

const std::string &repeats_help() {
    using A = AdaptiveRepeats;
    static const std::string text =
        "timed repeats of every measurement (min / median / max / mean / stddev are reported). Unless given, a "
        "measurement stops early once it has " +
        std::to_string(A::min_samples) + " samples (" + std::to_string(A::quick_min_samples) +
        " with --quick) and has run " + plain(A::seconds) + " s or varies by less than " +
        plain(A::steady_spread * 100) + "% (stddev / mean)";
    return text;
}

const std::string &sizes_help() {
    static const std::string text = "bandwidth sweep: sizes separated by commas, a geometric range (factor 4 if left "
                                    "out) or a linear one (FROM:TO:+STEP); at most " +
                                    std::to_string(kMaxSizeListPoints) + " sizes";
    return text;
}

const std::vector<OptionSpec> &run_specs() {
    static const std::vector<OptionSpec> specs = {
        {"backend", "NAME[,NAME...]|all", "", "",
         "backend(s) to run on, repeatable; 'all' = every available one. Default for run: the library's choice "
         "(XFER_BACKEND, the config file's backend key, else the first available of pinned, pageable, managed, "
         "zerocopy, host; run says on stderr which one it picked and why); for compare: every available backend, less "
         "the emulated host backend when a real device is present"},
        {"device", "N|all", "-1", "",
         "device index; -1 = XFER_DEVICE / the config file's device key / 0; 'all' = every device of each backend, "
         "reported per device (peer runs once per backend: it covers every device pair itself)"},
        {"size", "SIZE", "256MiB", "16MiB",
         "data size of roundtrip, sync-async, vector-add (per array), overlap (in total) and access"},
        {"sizes", "LIST|FROM:TO[:FACTOR|:+STEP]", "1KiB:1GiB:4", "4KiB:16MiB:16", sizes_help().c_str()},
        {"direction", "h2d,d2h,bidir", "h2d,d2h,bidir", "", "bandwidth: directions to measure"},
        {"repeats", "N", "20", "5", repeats_help().c_str()},
        {"warmup", "N", "2", "1", "untimed warm-up runs before the timed repeats"},
        {"batches", "N", "8", "4", "overlap: number of batches"},
        {"streams", "N", "3", "", "overlap: streams of the pipelined pass"},
        {"copies", "N", "4096", "512", "batching: number of small copies"},
        {"copy-size", "SIZE", "4KiB", "", "batching: bytes per small copy"},
        {"stride", "N", "32", "", "access: elements between the reads of neighbouring threads"},
        {"seed", "N", "", "", "seed of the random data. Default: a random seed (recorded in the report)"},
        {"format", "table|csv|json", "table", "",
         "report format. csv: the header row first, then one row per figure (csv.DictReader and pandas.read_csv read "
         "it as it is; the run's metadata is in the JSON report, or see --csv-metadata)"},
        {"output", "FILE", "", "",
         "write the report to FILE (opened before anything is measured; it replaces an earlier FILE only once "
         "complete, so an interrupted run keeps it). Default: stdout"},
        {"trace", "FILE", "", "",
         "write every copy, kernel and prefetch as Chrome Trace Event JSON (open it in "
         "Perfetto or chrome://tracing, or draw it with 'plot --kind overlap'); written as -o is"},
    };
    return specs;
}

// The --quick defaults, listed from the table above (written once, there).
std::string quick_help() {
    std::string text = "a first look in seconds: smaller defaults (";
    bool first = true;
    for (const OptionSpec &s : run_specs())
        if (*s.quick_text) {
            text += (first ? "--" : ", --") + std::string(s.name) + " " + s.quick_text;
            first = false;
        }
    return text + "); options given explicitly still win";
}

po::options_description run_description(const char *command) {
    po::options_description d(std::string("Options of '") + command +
                                  "' (SIZE: 4096, 4KiB, 256MiB, 1GiB; KB/MB/GB = 10^3/10^6/10^9 bytes)",
                              100, 50);
    for (const OptionSpec &s : run_specs()) {
        if (std::string(s.name) == "backend") {
            d.add_options()(option_key(s.name).c_str(),
                            po::value<std::vector<std::string>>()->composing()->value_name(s.value_name), s.help);
            continue;
        }
        auto *value = po::value<std::string>()->value_name(s.value_name);
        if (*s.default_text) value->default_value(s.default_text);
        d.add_options()(option_key(s.name).c_str(), value, s.help);
    }
    d.add_options()("config", po::value<std::string>()->value_name("FILE"),
                    "configuration file, as the library reads it (sets XFER_CONFIG); run options may also be set "
                    "in its [xfer-tool] section. Default: $XFER_CONFIG")(
        "quick", po::bool_switch(), quick_help().c_str())("samples", po::bool_switch(),
                                                          "JSON: every figure carries its raw samples")(
        "csv-metadata", po::bool_switch(),
        "CSV: the run's metadata (versions, time, host, command, seed, configuration, units) as '#' comment lines "
        "before the header row (pandas: read_csv(..., comment='#'))")(
        "long", po::bool_switch(), "table: bandwidth as one row per figure and size (default: one row per size)")(
        "log-copies", po::bool_switch(),
        "print one line per copy call and path on stderr, as the library's copy log writes it (XFER_LOG=copies): "
        "the call, direction, path, why that path, copies, bytes, host time; no progress indicator")(
        option_key("quiet").c_str(), po::bool_switch(),
        "no progress indicator (it shows only when stderr is a terminal)")(option_key("help").c_str(),
                                                                           "show this help");
    return d;
}

std::string try_hint(const char *command) { return std::string("Try 'xfer-tool ") + command + " --help'."; }

// The library's int grammar (value_parse.hpp), with a lower bound.
long long parse_int(const std::string &text, const std::string &where, long long min) {
    std::string why;
    const std::optional<int> v = xfer::core::parse_int(text, &why);
    if (!v) throw UsageError(where + ": '" + text + "' is not an integer (" + why + ")", "");
    if (*v < min) throw UsageError(where + ": " + text + " is below the minimum " + std::to_string(min), "");
    return *v;
}

// A 64-bit seed: digits only (the int grammar stops at 2^31).
std::uint64_t parse_seed(const std::string &text, const std::string &where) {
    const std::string_view t = xfer::core::trim(text);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size())
        throw UsageError(where + ": '" + text + "' is not a seed (a whole number from 0 to 2^64-1)", "");
    return v;
}

std::uint64_t parse_size_option(const std::string &text, const std::string &where) {
    try {
        return parse_size(text);
    } catch (const std::invalid_argument &e) {
        throw UsageError(where + ": " + e.what(), "");
    }
}

std::vector<std::string> split_commas(const std::vector<std::string> &items) {
    std::vector<std::string> out;
    for (const std::string &item : items) {
        std::stringstream in(item);
        std::string part;
        while (std::getline(in, part, ','))
            if (!part.empty()) out.push_back(part);
    }
    return out;
}

// Sets one option from its text; `where` names it in messages ("--size", "[xfer-tool] size in FILE").
void set_option(RunOptions &o, const std::string &name, const std::vector<std::string> &values,
                const std::string &where) {
    const std::string &v = values.front();
    if (name == "backend") {
        o.backends.clear();
        o.all_backends = false;
        for (const std::string &b : split_commas(values)) {
            if (b == "all")
                o.all_backends = true;
            else if (std::find(o.backends.begin(), o.backends.end(), b) == o.backends.end())
                o.backends.push_back(b);
        }
        if (o.all_backends && !o.backends.empty())
            throw UsageError(where + ": 'all' cannot be combined with backend names", "");
    } else if (name == "device") {
        o.all_devices = v == "all";
        o.device = o.all_devices ? -1 : static_cast<int>(parse_int(v, where, -1));
    } else if (name == "size") {
        o.size = parse_size_option(v, where);
    } else if (name == "sizes") {
        try {
            o.sizes = parse_size_list(v);
        } catch (const std::invalid_argument &e) {
            throw UsageError(where + ": " + e.what(), "");
        }
    } else if (name == "direction") {
        std::vector<std::string> dirs;
        for (const std::string &d : split_commas(values)) {
            if (d != "h2d" && d != "d2h" && d != "bidir")
                throw UsageError(where + ": unknown direction '" + d + "' (use h2d, d2h, bidir)", "");
            if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
        }
        if (dirs.empty()) throw UsageError(where + ": no direction given (use h2d, d2h, bidir)", "");
        o.directions = dirs;
    } else if (name == "repeats") {
        o.repeats = static_cast<int>(parse_int(v, where, 1));
    } else if (name == "warmup") {
        o.warmup = static_cast<int>(parse_int(v, where, 0));
    } else if (name == "batches") {
        o.batches = static_cast<int>(parse_int(v, where, 1));
    } else if (name == "streams") {
        o.streams = static_cast<int>(parse_int(v, where, 1));
    } else if (name == "copies") {
        o.copies = static_cast<std::uint64_t>(parse_int(v, where, 1));
    } else if (name == "copy-size") {
        o.copy_size = parse_size_option(v, where);
    } else if (name == "stride") {
        o.stride = static_cast<std::uint64_t>(parse_int(v, where, 1));
    } else if (name == "seed") {
        o.seed = parse_seed(v, where);
    } else if (name == "format") {
        if (v != "table" && v != "csv" && v != "json")
            throw UsageError(where + ": unknown format '" + v + "' (use table, csv or json)", "");
        o.format = v;
    } else if (name == "output") {
        o.output = v;
    } else if (name == "trace") {
        o.trace = v;
    }
}

std::vector<std::string> resolve_workflows(const std::vector<std::string> &names, bool required, const char *command) {
    std::string known;
    for (const Workflow &w : all_workflows()) known += (known.empty() ? "" : ", ") + std::string(w.name);
    std::vector<std::string> out;
    const std::vector<std::string> items = split_commas(names);
    if (items.empty()) {
        if (required) throw UsageError(std::string(command) + " needs a workflow: all, " + known, try_hint(command));
        for (const Workflow &w : all_workflows())
            if (w.in_all) out.push_back(w.name);
        return out;
    }
    for (const std::string &name : items) {
        if (name == "all") {
            for (const Workflow &w : all_workflows())
                if (w.in_all && std::find(out.begin(), out.end(), w.name) == out.end()) out.push_back(w.name);
            continue;
        }
        if (!find_workflow(name))
            throw UsageError("unknown workflow '" + name + "' (workflows: all, " + known + ")", try_hint(command));
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
    return out;
}

std::uint64_t random_seed() {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

Invocation parse_run(const std::vector<std::string> &args, Command command) {
    const char *name = command == Command::run ? "run" : "compare";
    po::options_description visible = run_description(name);
    po::options_description all;
    all.add(visible).add_options()("workflow", po::value<std::vector<std::string>>());
    po::positional_options_description positional;
    positional.add("workflow", -1);

    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), try_hint(name));
    }
    Invocation inv;
    inv.command = command;
    if (vm.count("help")) {
        inv.command = Command::help;
        inv.help_text = run_help(name);
        return inv;
    }
    RunOptions &o = inv.run;
    o.seed = random_seed();
    o.quick = vm["quick"].as<bool>();
    // Defaults first (--quick's where it has one), then the config file section, then what the
    // command line set.
    std::vector<std::string> explicit_options;
    for (const OptionSpec &s : run_specs()) {
        if (!vm.count(s.name)) continue;
        if (vm[s.name].defaulted()) {
            const std::string text = o.quick && *s.quick_text ? s.quick_text : vm[s.name].as<std::string>();
            set_option(o, s.name, {text}, "--" + std::string(s.name));
            continue;
        }
        explicit_options.push_back(s.name);
    }
    if (vm.count("config"))
        inv.config = vm["config"].as<std::string>();
    else if (const char *env = std::getenv("XFER_CONFIG"); env && *env)
        inv.config = env;
    if (!inv.config.empty()) {
        std::ifstream file(inv.config);
        if (!file)
            throw UsageError("cannot read the configuration file '" + inv.config + "': " + std::strerror(errno), "");
        apply_config_section(file, inv.config, explicit_options, o);
    }
    try {
        for (const std::string &opt : explicit_options) {
            const po::variable_value &value = vm[opt];
            std::vector<std::string> values = opt == "backend" ? value.as<std::vector<std::string>>()
                                                               : std::vector<std::string>{value.as<std::string>()};
            set_option(o, opt, values, "--" + opt);
            if (opt == "repeats") o.fixed_repeats = true;
        }
    } catch (const UsageError &e) {
        throw UsageError(e.what(), try_hint(name));
    }
    o.samples = vm["samples"].as<bool>();
    o.csv_metadata = vm["csv-metadata"].as<bool>();
    o.long_table = vm["long"].as<bool>();
    o.quiet = vm["quiet"].as<bool>();
    o.log_copies = vm["log-copies"].as<bool>();
    o.config = inv.config;
    o.workflows = resolve_workflows(vm.count("workflow") ? vm["workflow"].as<std::vector<std::string>>()
                                                         : std::vector<std::string>{},
                                    command == Command::run, name);
    return inv;
}

Invocation parse_list(const std::vector<std::string> &args) {
    po::options_description d("Options of 'list'");
    d.add_options()("config", po::value<std::string>()->value_name("FILE"),
                    "configuration file, as the library reads it (sets XFER_CONFIG). Default: $XFER_CONFIG")(
        option_key("help").c_str(), "show this help");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(d).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), try_hint("list"));
    }
    Invocation inv;
    if (vm.count("help")) {
        std::ostringstream text;
        text << "Usage: xfer-tool list [--config FILE]\n\n"
             << "Lists every backend found (available or not, and why), whatever XFER_BACKEND or the configuration's\n"
             << "backend key names, with a * on the one opened when a program names none (xfer_open(NULL, ...), 'run'\n"
             << "without --backend) and why it is that one; the devices (name, memory, PCIe link,\n"
             << "concurrentManagedAccess, canMapHostMemory, copy engines) and the effective configuration\n"
             << "parameters with value, source and help.\n\n"
             << d;
        inv.help_text = text.str();
        return inv;
    }
    inv.command = Command::list;
    if (vm.count("config")) inv.config = vm["config"].as<std::string>();
    return inv;
}

// Options `d` plus positional file names ("input"), for the commands that read files.
po::variables_map parse_with_inputs(const std::vector<std::string> &args, const po::options_description &d,
                                    const char *command) {
    po::options_description all;
    all.add(d).add_options()("input", po::value<std::vector<std::string>>());
    po::positional_options_description positional;
    positional.add("input", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), try_hint(command));
    }
    return vm;
}

std::vector<std::string> inputs_of(const po::variables_map &vm) {
    return vm.count("input") ? vm["input"].as<std::vector<std::string>>() : std::vector<std::string>{};
}

Invocation parse_plot(const std::vector<std::string> &args) {
    po::options_description d("Options of 'plot'");
    d.add_options()(option_key("output").c_str(), po::value<std::string>()->value_name("FILE.png|FILE.svg"),
                    "image to write; the extension picks the format")(
        "kind", po::value<std::string>()->value_name("bandwidth|overlap")->default_value("bandwidth"),
        "bandwidth: GB/s against size from a JSON report (xfer lines and, where the report has them, the raw "
        "calls' lines beside them); overlap: the timeline of a --trace file, one row per stream")(
        option_key("help").c_str(), "show this help");
    const po::variables_map vm = parse_with_inputs(args, d, "plot");
    Invocation inv;
    if (vm.count("help")) {
        std::ostringstream text;
        text << "Usage: xfer-tool plot RESULTS.json -o FILE.png|FILE.svg\n"
             << "       xfer-tool plot --kind overlap TRACE.json -o FILE.png|FILE.svg\n\n"
             << "bandwidth: GB/s (10^9 bytes/s) against transfer size, one line per backend and direction, from the\n"
             << "bandwidth results of a JSON report (xfer-tool run bandwidth --format json -o RESULTS.json); the raw\n"
             << "CUDA calls are drawn thin and dotted beside xfer's. The title names device, date and version.\n"
             << "overlap: the Chrome trace of a run (xfer-tool run overlap --trace TRACE.json) as a timeline: one\n"
             << "row per stream, one box per copy, kernel or prefetch, coloured by kind.\n"
             << "Drawn with gnuplot (Debian: gnuplot-nox; XFER_TOOL_GNUPLOT names another executable).\n\n"
             << d;
        inv.help_text = text.str();
        return inv;
    }
    const auto inputs = inputs_of(vm);
    if (inputs.size() != 1)
        throw UsageError("plot needs exactly one RESULTS.json (or TRACE.json with --kind overlap)", try_hint("plot"));
    if (!vm.count("output")) throw UsageError("plot needs -o FILE.png or -o FILE.svg", try_hint("plot"));
    inv.command = Command::plot;
    inv.plot.input = inputs.front();
    inv.plot.output = vm["output"].as<std::string>();
    inv.plot.kind = vm["kind"].as<std::string>();
    if (inv.plot.kind != "bandwidth" && inv.plot.kind != "overlap")
        throw UsageError("--kind: unknown plot kind '" + inv.plot.kind + "' (use bandwidth or overlap)",
                         try_hint("plot"));
    return inv;
}

Invocation parse_diff(const std::vector<std::string> &args) {
    po::options_description d("Options of 'diff'");
    d.add_options()("all", po::bool_switch(), "also list the figures that did not change")(option_key("help").c_str(),
                                                                                           "show this help");
    const po::variables_map vm = parse_with_inputs(args, d, "diff");
    Invocation inv;
    if (vm.count("help")) {
        std::ostringstream text;
        text << "Usage: xfer-tool diff A.json B.json [--all]\n\n"
             << "Compares two JSON reports (xfer-tool run|compare --format json): the figures of the same workflow,\n"
             << "backend, figure, unit and size whose medians differ by more than their spread (2 x the combined\n"
             << "standard deviation, and at least 2%), marked better or worse, after both runs' metadata (time,\n"
             << "host, versions, device). For regressions across versions and machines.\n"
             << "Exit status: 0 no figure got worse beyond its spread (none changed, or only for the better);\n"
             << "1 regressions: at least one figure marked WORSE; 2 bad command line; 3 a file could not be read\n"
             << "(or is not a report).\n\n"
             << d;
        inv.help_text = text.str();
        return inv;
    }
    const auto inputs = inputs_of(vm);
    if (inputs.size() != 2) throw UsageError("diff needs two reports: A.json B.json", try_hint("diff"));
    inv.command = Command::diff;
    inv.diff.before = inputs[0];
    inv.diff.after = inputs[1];
    inv.diff.all = vm["all"].as<bool>();
    return inv;
}

} // namespace

void apply_config_section(std::istream &file, const std::string &source,
                          const std::vector<std::string> &set_on_command_line, RunOptions &options) {
    // The library's reader (config_file.hpp): the same INI rules, and every key with its line,
    // so messages read "FILE:LINE: ..." as the library's do. Other sections and top-level keys
    // belong to the library, which checks them when it opens a backend.
    xfer::core::ConfigFile parsed;
    try {
        parsed = xfer::core::parse_config(file, source);
    } catch (const std::exception &e) {
        throw UsageError(e.what(), "");
    }
    for (const xfer::core::ConfigEntry &entry : parsed.entries) {
        if (entry.section != kSection) continue;
        const std::string where = source + ":" + std::to_string(entry.line) + ": [" + kSection + "] " + entry.key;
        const auto spec = std::find_if(run_specs().begin(), run_specs().end(),
                                       [&](const OptionSpec &s) { return entry.key == s.name; });
        if (spec == run_specs().end())
            throw UsageError(where + ": unknown key", "Keys of [xfer-tool] are the long options of 'xfer-tool run'.");
        if (std::find(set_on_command_line.begin(), set_on_command_line.end(), entry.key) != set_on_command_line.end())
            continue;
        set_option(options, entry.key, {entry.value}, where);
        if (entry.key == "repeats") options.fixed_repeats = true;
    }
}

std::string general_help() {
    std::ostringstream text;
    text << "xfer-tool " << XFER_TOOL_VERSION
         << ": what each memory strategy (backend) costs on this machine for host <-> device transfers.\n\n"
         << "Usage:\n"
         << "  xfer-tool list [--config FILE]                 backends, devices and the effective configuration\n"
         << "  xfer-tool run WORKFLOW...|all [OPTIONS]        run workflows, verify them, report\n"
         << "  xfer-tool compare [WORKFLOW...] [OPTIONS]      all workflows on every available backend, side by side,\n"
         << "                                                 with one recommendation per transfer pattern\n"
         << "  xfer-tool plot RESULTS.json -o FILE.png|.svg   bandwidth against transfer size (gnuplot)\n"
         << "  xfer-tool plot --kind overlap TRACE.json -o FILE.png   timeline of a --trace file, one row per stream\n"
         << "  xfer-tool diff A.json B.json                   figures that changed beyond their spread\n"
         << "  xfer-tool bench [OPTIONS]                      every performance target: xfer vs the raw call, "
            "PASS/FAIL\n"
         << "  xfer-tool calibrate [--force] [OPTIONS]        what copies of user memory cost on this GPU, where "
            "it is kept,\n"
         << "                                                 and the values the backends derive from it\n"
         << "  xfer-tool --help | --version\n\n"
         << "Workflows (each verified against a host-computed reference):\n";
    for (const Workflow &w : all_workflows()) {
        std::string name = w.name;
        name.resize(12, ' ');
        text << "  " << name << w.summary << "\n";
    }
    text << "\n"
         << run_description("run") << "\n"
         << "Units: GB/s = 10^9 bytes/s; KiB/MiB/GiB = 2^10/2^20/2^30 bytes; times in ms.\n"
         << "How long: 'compare' and 'run all' with their defaults take about a minute on one GPU; --quick a few\n"
         << "seconds (the README gives measured times).\n"
         << "Exit status: 0 success; 1 a result failed verification; 2 bad command line; 3 an error (a backend\n"
         << "could not be opened, a call failed, a file could not be written); 130 / 143 stopped by SIGINT\n"
         << "(Ctrl-C) / SIGTERM after the measurement under way, earlier -o / --trace files kept as they were\n"
         << "(a second signal ends it at once). diff: 1 a figure got worse beyond its spread; bench: 4 a target\n"
         << "missed its ratio.\n"
         << "Environment: XFER_CONFIG (configuration file), XFER_PLUGIN_PATH (backend search path), XFER_BACKEND,\n"
         << "XFER_DEVICE and XFER_<BACKEND>_<PARAM> (see 'xfer-tool list'); XFER_TOOL_GNUPLOT (gnuplot executable);\n"
         << "XFER_TOOL_KERNELS_PATH (CUDA kernels library); XFER_TOOL_CORRUPT=1 (test hook: corrupts one byte of\n"
         << "every result before verification).\n";
    return text.str();
}

std::string run_help(const char *command) {
    std::ostringstream text;
    if (std::string(command) == "run")
        text << "Usage: xfer-tool run WORKFLOW...|all [OPTIONS]\n\n";
    else
        text << "Usage: xfer-tool compare [WORKFLOW...] [OPTIONS]\n\n"
             << "Runs the workflows (default: all) on every available backend (or --backend), then prints a\n"
             << "side-by-side table and a recommendation per transfer pattern.\n\n";
    text << "Workflows:\n";
    for (const Workflow &w : all_workflows()) {
        std::string name = w.name;
        name.resize(12, ' ');
        text << "  " << name << w.summary << "\n";
    }
    text << "  all         every workflow above but peer, in this order\n\n" << run_description(command);
    return text.str();
}

Invocation parse_command_line(const std::vector<std::string> &args) {
    Invocation inv;
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        inv.help_text = general_help();
        return inv;
    }
    if (args[0] == "--version" || args[0] == "-V") {
        inv.command = Command::version;
        return inv;
    }
    // One row per sub-command: a new one is a parse_* function and a row here.
    struct Subcommand {
        const char *name;
        Invocation (*parse)(const std::vector<std::string> &rest);
    };
    static const Subcommand subcommands[] = {
        {"list", parse_list},
        {"run", [](const std::vector<std::string> &rest) { return parse_run(rest, Command::run); }},
        {"compare", [](const std::vector<std::string> &rest) { return parse_run(rest, Command::compare); }},
        {"plot", parse_plot},
        {"diff", parse_diff},
        {"bench",
         [](const std::vector<std::string> &rest) { // parses its own options (bench/)
             Invocation inv;
             inv.command = Command::bench;
             inv.bench_args = rest;
             return inv;
         }},
        {"calibrate",
         [](const std::vector<std::string> &rest) { // parses its own options (calibrate_command.cpp)
             Invocation inv;
             inv.command = Command::calibrate;
             inv.bench_args = rest;
             return inv;
         }},
    };
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    std::string names;
    for (const Subcommand &c : subcommands) {
        if (args[0] == c.name) return c.parse(rest);
        names += (names.empty() ? "" : ", ") + std::string(c.name);
    }
    throw UsageError("unknown command '" + args[0] + "' (commands: " + names + ")", "Try 'xfer-tool --help'.");
}

} // namespace xfer::tool

#include "cli.hpp"

#include "units.hpp"
#include "workflows/workflow.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace po = boost::program_options;

namespace xfer_tool {
namespace {

constexpr const char *kSection = "xfer-tool";

// Every run/compare option once: the command line and the config file section share it.
struct OptionSpec {
    const char *name;
    const char *short_name; // "" for none
    const char *value_name;
    const char *default_text; // "" for none (the help says what happens)
    const char *help;
};

const std::vector<OptionSpec> &run_specs()
{
    static const std::vector<OptionSpec> specs = {
        {"backend", "b", "NAME[,NAME...]|all", "",
         "backend(s) to run on, repeatable; 'all' = every available one. Default: the library's choice "
         "(XFER_BACKEND, the config file's backend key, else the first available of pinned, pageable, managed, "
         "zerocopy, host)"},
        {"device", "d", "N|all", "-1",
         "device index; -1 = XFER_DEVICE / the config file's device key / 0; 'all' = every device of each backend, "
         "reported per device (peer runs once per backend: it covers every device pair itself)"},
        {"size", "s", "SIZE", "256MiB",
         "data size of roundtrip, sync-async, vector-add (per array), overlap (in total) and access"},
        {"sizes", "", "LIST|FROM:TO[:FACTOR]", "1KiB:1GiB:4", "bandwidth sweep: sizes separated by commas, or a "
                                                               "geometric range (factor 4 if left out)"},
        {"repeats", "r", "N", "20", "timed repeats of every measurement (min / median / max are reported)"},
        {"warmup", "", "N", "2", "untimed warm-up runs before the timed repeats"},
        {"batches", "", "N", "8", "overlap: number of batches"},
        {"streams", "", "N", "3", "overlap: streams of the pipelined pass"},
        {"copies", "", "N", "4096", "batching: number of small copies"},
        {"copy-size", "", "SIZE", "4KiB", "batching: bytes per small copy"},
        {"stride", "", "N", "32", "access: elements between the reads of neighbouring threads"},
        {"seed", "", "N", "", "seed of the random data. Default: a random seed (recorded in the report)"},
        {"format", "f", "table|csv|json", "table", "report format"},
        {"output", "o", "FILE", "", "write the report to FILE. Default: stdout"},
        {"trace", "", "FILE", "", "write every copy, kernel and prefetch as Chrome Trace Event JSON (open it in "
                                  "Perfetto or chrome://tracing)"},
    };
    return specs;
}

std::string option_key(const OptionSpec &s)
{
    return std::string(s.name) + (*s.short_name ? std::string(",") + s.short_name : "");
}

po::options_description run_description(const char *command)
{
    po::options_description d(std::string("Options of '") + command + "' (SIZE: 4096, 4KiB, 256MiB, 1GiB; KB/MB/GB = 10^3/10^6/10^9 bytes)", 100, 50);
    for (const OptionSpec &s : run_specs()) {
        if (std::string(s.name) == "backend") {
            d.add_options()(option_key(s).c_str(),
                            po::value<std::vector<std::string>>()->composing()->value_name(s.value_name), s.help);
            continue;
        }
        auto *value = po::value<std::string>()->value_name(s.value_name);
        if (*s.default_text)
            value->default_value(s.default_text);
        d.add_options()(option_key(s).c_str(), value, s.help);
    }
    d.add_options()("config", po::value<std::string>()->value_name("FILE"),
                    "configuration file, as the library reads it (sets XFER_CONFIG); run options may also be set "
                    "in its [xfer-tool] section. Default: $XFER_CONFIG")
        ("quiet,q", po::bool_switch(), "no progress indicator (it shows only when stderr is a terminal)")
        ("help,h", "show this help");
    return d;
}

std::string try_hint(const char *command)
{
    return std::string("Try 'xfer-tool ") + command + " --help'.";
}

long long parse_int(const std::string &text, const std::string &where, long long min)
{
    std::size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != text.size())
        throw UsageError(where + ": '" + text + "' is not an integer", "");
    if (v < min)
        throw UsageError(where + ": " + text + " is below the minimum " + std::to_string(min), "");
    return v;
}

std::uint64_t parse_size_option(const std::string &text, const std::string &where)
{
    try {
        return parse_size(text);
    } catch (const std::invalid_argument &e) {
        throw UsageError(where + ": " + e.what(), "");
    }
}

std::vector<std::string> split_commas(const std::vector<std::string> &items)
{
    std::vector<std::string> out;
    for (const std::string &item : items) {
        std::stringstream in(item);
        std::string part;
        while (std::getline(in, part, ','))
            if (!part.empty())
                out.push_back(part);
    }
    return out;
}

// Sets one option from its text; `where` names it in messages ("--size", "[xfer-tool] size in FILE").
void set_option(RunOptions &o, const std::string &name, const std::vector<std::string> &values, const std::string &where)
{
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
        o.seed = static_cast<std::uint64_t>(parse_int(v, where, 0));
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

std::vector<std::string> resolve_workflows(const std::vector<std::string> &names, bool required, const char *command)
{
    std::string known;
    for (const Workflow &w : all_workflows())
        known += (known.empty() ? "" : ", ") + std::string(w.name);
    std::vector<std::string> out;
    const std::vector<std::string> items = split_commas(names);
    if (items.empty()) {
        if (required)
            throw UsageError(std::string(command) + " needs a workflow: all, " + known, try_hint(command));
        for (const Workflow &w : all_workflows())
            if (w.in_all)
                out.push_back(w.name);
        return out;
    }
    for (const std::string &name : items) {
        if (name == "all") {
            for (const Workflow &w : all_workflows())
                if (w.in_all && std::find(out.begin(), out.end(), w.name) == out.end())
                    out.push_back(w.name);
            continue;
        }
        if (!find_workflow(name))
            throw UsageError("unknown workflow '" + name + "' (workflows: all, " + known + ")", try_hint(command));
        if (std::find(out.begin(), out.end(), name) == out.end())
            out.push_back(name);
    }
    return out;
}

std::uint64_t random_seed()
{
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

Invocation parse_run(const std::vector<std::string> &args, Command command)
{
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
    // Defaults first, then the config file section, then what the command line set.
    std::vector<std::string> explicit_options;
    for (const OptionSpec &s : run_specs()) {
        if (!vm.count(s.name))
            continue;
        if (vm[s.name].defaulted()) {
            set_option(o, s.name, {vm[s.name].as<std::string>()}, "--" + std::string(s.name));
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
            throw UsageError("cannot read the configuration file '" + inv.config + "'", "");
        apply_config_section(file, inv.config, explicit_options, o);
    }
    try {
        for (const std::string &opt : explicit_options) {
            const po::variable_value &value = vm[opt];
            std::vector<std::string> values = opt == "backend" ? value.as<std::vector<std::string>>()
                                                               : std::vector<std::string>{value.as<std::string>()};
            set_option(o, opt, values, "--" + opt);
        }
    } catch (const UsageError &e) {
        throw UsageError(e.what(), try_hint(name));
    }
    o.quiet = vm["quiet"].as<bool>();
    o.config = inv.config;
    o.workflows = resolve_workflows(vm.count("workflow") ? vm["workflow"].as<std::vector<std::string>>()
                                                         : std::vector<std::string>{},
                                    command == Command::run, name);
    return inv;
}

Invocation parse_list(const std::vector<std::string> &args)
{
    po::options_description d("Options of 'list'");
    d.add_options()("config", po::value<std::string>()->value_name("FILE"),
                    "configuration file, as the library reads it (sets XFER_CONFIG). Default: $XFER_CONFIG")
        ("help,h", "show this help");
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
             << "Lists every backend found (available or not, and why), the devices (name, memory, PCIe link,\n"
             << "concurrentManagedAccess, canMapHostMemory, copy engines) and the effective configuration\n"
             << "parameters with value, source and help.\n\n"
             << d;
        inv.help_text = text.str();
        return inv;
    }
    inv.command = Command::list;
    if (vm.count("config"))
        inv.config = vm["config"].as<std::string>();
    return inv;
}

Invocation parse_plot(const std::vector<std::string> &args)
{
    po::options_description d("Options of 'plot'");
    d.add_options()("output,o", po::value<std::string>()->value_name("FILE.png|FILE.svg"),
                    "image to write; the extension picks the format")("help,h", "show this help");
    po::options_description all;
    all.add(d).add_options()("input", po::value<std::vector<std::string>>());
    po::positional_options_description positional;
    positional.add("input", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    } catch (const po::error &e) {
        throw UsageError(e.what(), try_hint("plot"));
    }
    Invocation inv;
    if (vm.count("help")) {
        std::ostringstream text;
        text << "Usage: xfer-tool plot RESULTS.json -o FILE.png|FILE.svg\n\n"
             << "Draws bandwidth (GB/s = 10^9 bytes/s) against transfer size, one line per backend and direction,\n"
             << "from the bandwidth results of a JSON report (xfer-tool run bandwidth --format json -o RESULTS.json),\n"
             << "with gnuplot (Debian: gnuplot-nox; XFER_TOOL_GNUPLOT names another executable).\n\n"
             << d;
        inv.help_text = text.str();
        return inv;
    }
    const auto inputs = vm.count("input") ? vm["input"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (inputs.size() != 1)
        throw UsageError("plot needs exactly one RESULTS.json", try_hint("plot"));
    if (!vm.count("output"))
        throw UsageError("plot needs -o FILE.png or -o FILE.svg", try_hint("plot"));
    inv.command = Command::plot;
    inv.plot.input = inputs.front();
    inv.plot.output = vm["output"].as<std::string>();
    return inv;
}

} // namespace

void apply_config_section(std::istream &file, const std::string &source, const std::vector<std::string> &set_on_command_line,
                          RunOptions &options)
{
    po::options_description d;
    for (const OptionSpec &s : run_specs())
        d.add_options()((std::string(kSection) + "." + s.name).c_str(), po::value<std::string>());
    po::parsed_options parsed(&d);
    try {
        // Other sections and top-level keys belong to the library: left to it.
        parsed = po::parse_config_file(file, d, true);
    } catch (const po::error &e) {
        throw UsageError(source + ": " + e.what(), "");
    }
    const std::string prefix = std::string(kSection) + ".";
    for (const po::option &opt : parsed.options) {
        if (opt.string_key.rfind(prefix, 0) != 0)
            continue;
        const std::string key = opt.string_key.substr(prefix.size());
        const std::string where = "[" + std::string(kSection) + "] " + key + " in " + source;
        if (opt.unregistered)
            throw UsageError("unknown key " + where, "Keys of [xfer-tool] are the long options of 'xfer-tool run'.");
        if (std::find(set_on_command_line.begin(), set_on_command_line.end(), key) != set_on_command_line.end())
            continue;
        set_option(options, key, opt.value, where);
    }
}

std::string general_help()
{
    std::ostringstream text;
    text << "xfer-tool " << XFER_TOOL_VERSION
         << ": what each memory strategy (backend) costs on this machine for host <-> device transfers.\n\n"
         << "Usage:\n"
         << "  xfer-tool list [--config FILE]                 backends, devices and the effective configuration\n"
         << "  xfer-tool run WORKFLOW...|all [OPTIONS]        run workflows, verify them, report\n"
         << "  xfer-tool compare [WORKFLOW...] [OPTIONS]      all workflows on every available backend, side by side,\n"
         << "                                                 with one recommendation per transfer pattern\n"
         << "  xfer-tool plot RESULTS.json -o FILE.png|.svg   bandwidth against transfer size (gnuplot)\n"
         << "  xfer-tool --help | --version\n\n"
         << "Workflows (each verified against a host-computed reference):\n";
    for (const Workflow &w : all_workflows()) {
        std::string name = w.name;
        name.resize(12, ' ');
        text << "  " << name << w.summary << "\n";
    }
    text << "\n" << run_description("run") << "\n"
         << "Units: GB/s = 10^9 bytes/s; KiB/MiB/GiB = 2^10/2^20/2^30 bytes; times in ms.\n"
         << "Exit status: 0 success; 1 a result failed verification; 2 bad command line; 3 an error (a backend\n"
         << "could not be opened, a call failed, a file could not be written).\n"
         << "Environment: XFER_CONFIG (configuration file), XFER_PLUGIN_PATH (backend search path), XFER_BACKEND,\n"
         << "XFER_DEVICE and XFER_<BACKEND>_<PARAM> (see 'xfer-tool list'); XFER_TOOL_GNUPLOT (gnuplot executable);\n"
         << "XFER_TOOL_KERNELS_PATH (CUDA kernels library); XFER_TOOL_CORRUPT=1 (test hook: corrupts one byte of\n"
         << "every result before verification).\n";
    return text.str();
}

std::string run_help(const char *command)
{
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

Invocation parse_command_line(const std::vector<std::string> &args)
{
    Invocation inv;
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        inv.help_text = general_help();
        return inv;
    }
    if (args[0] == "--version" || args[0] == "-V") {
        inv.command = Command::version;
        return inv;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "list")
        return parse_list(rest);
    if (args[0] == "run")
        return parse_run(rest, Command::run);
    if (args[0] == "compare")
        return parse_run(rest, Command::compare);
    if (args[0] == "plot")
        return parse_plot(rest);
    throw UsageError("unknown command '" + args[0] + "' (commands: list, run, compare, plot)", "Try 'xfer-tool --help'.");
}

} // namespace xfer_tool

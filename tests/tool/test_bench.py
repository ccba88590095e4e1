# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool bench` without a GPU: the smoke set on host completes and verifies, one table line
per target marked "smoke" (no target ratio), JSON valid against the schema; --targets, --repeats
and --list are honoured; a corrupted result is FAIL (exit 1); bad options exit 2. Structure and
verification only: nothing here depends on how fast the machine is."""
import json
import os

from tool_checks import expect, parse_args, run, validate_results

args = parse_args()
QUICK = ["--backend", "host", "--seed", "7", "--repeats", "3", "--warmup", "1"]

# The smoke set's names, from --list (the first column).
listed = run(args.tool, ["bench", "--list", "--backend", "host"]).stdout.splitlines()
expect(listed and listed[0].split()[0] == "target", "--list has no header:\n" + "\n".join(listed))
names = [line.split()[0] for line in listed[1:]]
expect(len(names) >= 8 and all(n.startswith("host-") for n in names), "smoke targets: %r" % names)
expect(all("(smoke)" in line for line in listed[1:]), "a host target has a goal:\n" + "\n".join(listed))
for kind in ("raw", "async", "overhead", "observer", "batch-loop", "batch-coalesced", "malloc", "overlap"):
    expect(any(n.startswith("host-" + kind) for n in names), "no host-%s target in %r" % (kind, names))

# Default choice: the smoke set without a CUDA backend, the CUDA table with one (never both).
default = [line.split()[0] for line in run(args.tool, ["bench", "--list"]).stdout.splitlines()[1:]]
expect(default == names or (default and not any(n.startswith("host-") for n in default)),
       "default targets mix the tables: %r" % default)

# Table: one line per target, all smoke, summary last; stderr quiet when not a terminal.
proc = run(args.tool, ["bench"] + QUICK)
expect(proc.stderr == "", "stderr is not quiet:\n" + proc.stderr)
lines = proc.stdout.splitlines()
expect("GB/s = 10^9 bytes/s" in proc.stdout, "table lacks the units legend")
rows = [l for l in lines if l.split() and l.split()[0] in names]
expect([r.split()[0] for r in rows] == names, "table rows %r, targets %r" % (rows, names))
for r in rows:
    expect(r.split()[-1] == "smoke" and "(smoke)" in r, "row not smoke: %r" % r)
expect(lines[-1] == "%d targets: %d smoke" % (len(names), len(names)), "summary: %r" % lines[-1])

# JSON: valid, empty workflow results, one row per target with both sides measured and verified.
path = os.path.join(args.workdir, "bench.json")
proc = run(args.tool, ["bench", "--format", "json", "--output", path] + QUICK)
expect(proc.stdout.strip() == "%d targets: %d smoke" % (len(names), len(names)), "stdout: %r" % proc.stdout)
data = validate_results(path, args.schema)
expect(data["results"] == [], "bench wrote workflow results")
bench = data["bench"]
expect(bench["repeats"] == 3 and bench["warmup"] == 1 and bench["seed"] == 7, "options not recorded: %r" %
       {k: bench[k] for k in ("repeats", "warmup", "seed")})
expect(bench["device"]["kind"] == "host", "device: %r" % bench["device"])
expect(bench["verdicts"] == {"smoke": len(names)}, "verdicts: %r" % bench["verdicts"])
expect([t["target"] for t in bench["targets"]] == names, "JSON targets: %r" % [t["target"] for t in bench["targets"]])
for t in bench["targets"]:
    expect(t["backend"] == "host" and t["goal"] is None and t["verdict"] == "smoke" and t["error"] is None,
           "%s: %r" % (t["target"], t))
    expect(t["verification"]["status"] == "passed" and t["verification"]["checked"] > 0,
           "%s verification: %r" % (t["target"], t["verification"]))
    for side in ("xfer", "reference", "ratio"):
        fig = t[side]
        expect(1 <= fig["samples"] <= 3 and fig["median"] is not None, "%s %s: %r" % (t["target"], side, fig))
    expect(t["ratio"]["unit"] in ("x", "%", "us") and t["ratio"]["note"], "%s ratio: %r" % (t["target"], t["ratio"]))

# The overhead rows say they measure with the statistics on; the observer rows compare the same
# call with and without a no-op copy observer, per copy, in us.
for t in bench["targets"]:
    if "-overhead-" in t["target"]:
        expect("statistics on" in t["summary"] and "statistics on" in t["xfer"]["label"], "%s: %r" % (t["target"], t))
    if "-observer-" in t["target"]:
        expect(t["ratio"]["unit"] == "us" and "per copy" in t["ratio"]["note"], "%s ratio: %r" % (t["target"], t["ratio"]))
        expect("no-op copy observer" in t["xfer"]["label"] and "without an observer" in t["reference"]["label"],
               "%s sides: %r / %r" % (t["target"], t["xfer"]["label"], t["reference"]["label"]))
        expect(t["xfer"]["median"] > 0 and t["reference"]["median"] > 0, "%s: nothing timed: %r" % (t["target"], t))
expect(sum("-observer-" in t["target"] for t in bench["targets"]) == 2, "observer rows: %r" % names)

# --targets: names and patterns, in table order; --targets without --backend picks from every table.
proc = run(args.tool, ["bench", "--targets", "host-overlap,host-raw-*", "-f", "json"] + QUICK[2:])
picked = [t["target"] for t in json.loads(proc.stdout)["bench"]["targets"]]
expect(picked == [n for n in names if n.startswith("host-raw-") or n == "host-overlap"], "picked %r" % picked)

# A corrupted result is FAIL whatever the speed: exit 1, the mismatch in the table and on stderr.
proc = run(args.tool, ["bench", "--targets", "host-raw-h2d-*,host-batch-loop-d2h"] + QUICK,
           env_extra={"XFER_TOOL_CORRUPT": "1"}, expect_rc=1)
fails = [l for l in proc.stdout.splitlines() if l.split() and l.split()[0] in names and l.split()[-1] == "FAIL"]
expect(len(fails) == 2, "FAIL rows:\n" + proc.stdout)
expect("verification failed: " in proc.stdout and "first mismatch at byte" in proc.stdout, proc.stdout)
expect(proc.stderr.count("verification FAILED") == 2, "stderr:\n" + proc.stderr)

# Bad command lines: exit 2 with what is wrong and a hint.
for argv, message in [
    (["bench", "--repeats", "0"], "--repeats: 0 is below the minimum 1"),
    (["bench", "--targets", "no-such-target"], "no bench target matches 'no-such-target'"),
    (["bench", "--backend", "no-such-backend"], "no bench target is about backend 'no-such-backend'"),
    (["bench", "--format", "csv"], "unknown format 'csv'"),
    (["bench", "--frobnicate"], "unrecognised option '--frobnicate'"),
]:
    proc = run(args.tool, argv, expect_rc=2)
    expect(message in proc.stderr and "Try 'xfer-tool bench --help'" in proc.stderr,
           "%r: stderr:\n%s" % (argv, proc.stderr))
    expect(proc.stdout == "", "%r wrote a report anyway" % argv)
expect("--repeats" in run(args.tool, ["bench", "--help"]).stdout, "bench --help lacks its options")
print("ok")

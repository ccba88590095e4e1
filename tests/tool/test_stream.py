# SPDX-License-Identifier: Apache-2.0
"""Output that streams and runs that can be compared: each workflow's block reaches a pipe
before the run ends; bad -o / --trace paths fail before measuring with the OS reason; the
table ends with PASS / FAIL; every report carries the run metadata; --samples, --direction,
the compact bandwidth table and --long."""
import csv
import json
import os
import subprocess
import time

from tool_checks import SMALL, WORKFLOWS, check_csv, expect, parse_args, run, validate_results

args = parse_args()
env = dict(os.environ)
for k in ("XFER_TOOL_CORRUPT", "XFER_CONFIG", "XFER_BACKEND"):
    env.pop(k, None)

# 1. Streaming: roundtrip's block arrives on the pipe while bandwidth (several seconds of fixed
# repeats on large sizes) still runs.
argv = [args.tool, "run", "roundtrip,bandwidth", "--backend", "host", "--size", "64KiB", "--sizes", "16MiB:64MiB:+16MiB",
        "--repeats", "20", "--warmup", "1", "--seed", "1"]
proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
seen_block_while_running = None
lines = []
for line in proc.stdout:
    lines.append(line)
    if line.startswith("   verification:") and seen_block_while_running is None:
        seen_block_while_running = proc.poll() is None
rest_err = proc.stderr.read()
rc = proc.wait(timeout=600)
expect(rc == 0, "streaming run: exit %d\n%s" % (rc, rest_err))
expect(seen_block_while_running is True, "roundtrip's block did not reach the pipe before the run ended:\n" + "".join(lines))
expect(lines[-1].strip() == "PASS", "the table does not end with PASS: %r" % lines[-3:])

# 2. Paths are opened before anything is measured, with the OS reason.
for extra, what in ((["-o", "/nonexistent-dir/r.json"], "cannot open '/nonexistent-dir/r.json' for writing: No such file or directory"),
                    (["--trace", "/nonexistent-dir/t.json"], "cannot open trace file '/nonexistent-dir/t.json' for writing: No such file or directory")):
    start = time.monotonic()
    p = run(args.tool, ["run", "all", "--backend", "host", "--size", "256MiB", "--repeats", "20"] + extra, expect_rc=3)
    expect(what in p.stderr, "%r: stderr lacks %r:\n%s" % (extra, what, p.stderr))
    expect(p.stdout == "", "%r: measured anyway:\n%s" % (extra, p.stdout[:2000]))

# 3. PASS / FAIL line.
p = run(args.tool, ["run", "roundtrip", "--backend", "host", "--size", "64KiB", "-r", "2"],
        env_extra={"XFER_TOOL_CORRUPT": "1"}, expect_rc=1)
expect(p.stdout.rstrip().splitlines()[-1] == "FAIL (1 check failed)", "last line: %r" % p.stdout[-200:])

# 4. Metadata in JSON (schema), CSV (comment lines) and the table; seed as a string; --samples.
big_seed = "18446744073709551557"  # above 2^53: a JSON number would lose it
json_path = os.path.join(args.workdir, "meta.json")
p = run(args.tool, ["run", "all", "--backend", "host", "--format", "json", "-o", json_path, "--samples", "--seed", big_seed]
        + [a for a in SMALL if a != "12345" and a != "--seed"])
expect(p.stdout.strip() == "PASS", "verdict beside a JSON file: %r" % p.stdout)
data = validate_results(json_path, args.schema)
run_info = data["run"]
expect(run_info["seed"] == big_seed, "seed: %r" % run_info["seed"])
expect(all(r["parameters"]["seed"] == big_seed for r in data["results"]), "seed parameter not a string")
expect(run_info["host"] and run_info["time"].endswith("Z"), "run: %r" % run_info)
expect("run all --backend host" in run_info["command_line"], "command line: %r" % run_info["command_line"])
expect(data["tool"]["commit"], "no commit")
names = {(c["section"], c["name"]) for c in run_info["config"]}
expect(("host", "device_memory") in names and ("xfer-tool", "repeats") in names, "config: %r" % sorted(names))
for r in data["results"]:
    for f in r["figures"]:
        if f["samples"] > 0:
            expect(len(f["values"]) == f["samples"], "%s/%s: values %r" % (r["workflow"], f["name"], f.get("values")))
            expect(f["stddev"] is not None and f["stddev"] >= 0 and f["mean"] is not None, "%s: %r" % (f["name"], f))
            expect(abs(sum(f["values"]) / len(f["values"]) - f["mean"]) <= 1e-9 * max(1.0, abs(f["mean"])),
                   "%s: mean does not match its samples" % f["name"])

csv_path = os.path.join(args.workdir, "meta.csv")
# The CSV carries the metadata only when asked (--csv-metadata); by default the header row is first.
run(args.tool, ["run", "roundtrip", "--backend", "host", "--format", "csv", "--csv-metadata", "-o", csv_path] + SMALL)
with open(csv_path) as f:
    text = f.read()
comments = [l for l in text.splitlines() if l.startswith("#")]
for key in ("# time: ", "# host: ", "# command: ", "# seed: 12345", "# config: host.device_memory"):
    expect(any(l.startswith(key) for l in comments), "CSV lacks %r:\n%s" % (key, "\n".join(comments)))
run(args.tool, ["run", "roundtrip", "--backend", "host", "--format", "csv", "-o", csv_path] + SMALL)
rows = check_csv(csv_path)
expect(all(r["mean"] and r["stddev"] for r in rows if r["samples"] != "0"), "CSV rows without mean/stddev")

table = run(args.tool, ["run", "roundtrip", "--backend", "host"] + SMALL).stdout
for key in ("xfer-tool ", "commit ", "run ", "seed 12345", "config "):
    expect(key in table.split("Units:")[0], "table header lacks %r:\n%s" % (key, table[:1000]))

# 5. --direction, the compact bandwidth table and --long.
dj = os.path.join(args.workdir, "dir.json")
run(args.tool, ["run", "bandwidth", "--backend", "host", "--direction", "h2d", "--format", "json", "-o", dj] + SMALL)
bw = validate_results(dj, args.schema)["results"][0]
expect({f["name"] for f in bw["figures"]} == {"h2d", "raw h2d", "h2d xfer / raw"}, "figures: %r" % {f["name"] for f in bw["figures"]})
compact = run(args.tool, ["run", "bandwidth", "--backend", "host"] + SMALL).stdout
block = compact.split("== bandwidth on host")[1]
expect("h2d GB/s" in block and "raw h2d" in block and "h2d xfer/raw" in block and "bidir GB/s" in block, block)
size_rows = [l for l in block.splitlines() if l.strip().split("  ")[0] in ("1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB")]
expect(len(size_rows) == 5, "compact table is not one row per size:\n" + block)
expect(block.count("xfer faster") <= 2, "the ratio note repeats:\n" + block)
longer = run(args.tool, ["run", "bandwidth", "--backend", "host", "--long"] + SMALL).stdout
expect("h2d xfer / raw" in longer and "stddev" in longer, "--long lacks the long form:\n" + longer[:3000])
print("ok")

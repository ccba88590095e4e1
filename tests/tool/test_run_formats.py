# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool run all --backend host` in table, CSV and JSON: every workflow runs and verifies;
JSON matches the schema; nothing on stderr when it is not a terminal (no progress, no errors)."""
import os

from tool_checks import SMALL, WORKFLOWS, check_csv, expect, parse_args, run, validate_results

args = parse_args()
base = ["run", "all", "--backend", "host"] + SMALL

proc = run(args.tool, base)
expect(proc.stderr == "", "stderr is not quiet when not a terminal:\n" + proc.stderr)
table = proc.stdout
expect("GB/s = 10^9 bytes/s" in table, "table lacks the units legend")
for wf in WORKFLOWS:
    expect("== %s on host:" % wf in table, "table lacks workflow %s" % wf)
expect(table.count("verification: passed") == len(WORKFLOWS), "not every workflow verified:\n" + table)
expect(table.rstrip().splitlines()[-1] == "PASS", "the table does not end with PASS")

csv_path = os.path.join(args.workdir, "results.csv")
run(args.tool, base + ["--format", "csv", "--output", csv_path])
rows = check_csv(csv_path)
expect({r["workflow"] for r in rows} == set(WORKFLOWS), "CSV lacks workflows: %r" % {r["workflow"] for r in rows})
expect(all(r["verification"] == "passed" for r in rows), "CSV has unverified rows")
expect(all(r["backend"] == "host" for r in rows), "CSV rows of another backend")
expect(any(r["unit"] == "GB/s" and r["workflow"] == "bandwidth" for r in rows), "CSV has no bandwidth GB/s rows")

json_path = os.path.join(args.workdir, "results.json")
run(args.tool, base + ["--format", "json", "--output", json_path])
data = validate_results(json_path, args.schema)
expect([r["workflow"] for r in data["results"]] == WORKFLOWS, "JSON workflows: %r" % [r["workflow"] for r in data["results"]])
for r in data["results"]:
    expect(r["verification"]["status"] == "passed", "%s did not verify: %r" % (r["workflow"], r["verification"]))
    expect(r["verification"]["checked"] > 0, "%s compared nothing" % r["workflow"])
    expect(r["error"] is None, "%s: %s" % (r["workflow"], r["error"]))
    expect(r["parameters"]["seed"] == "12345", "seed not recorded (as a string)")
    expect(r["figures"], "%s has no figures" % r["workflow"])
bw = next(r for r in data["results"] if r["workflow"] == "bandwidth")
sizes = sorted({f["bytes"] for f in bw["figures"]})
expect(sizes == [1024, 4096, 16384, 65536, 262144], "bandwidth sizes: %r" % sizes)
for direction in ("h2d", "d2h", "bidirectional"):
    rates = [f for f in bw["figures"] if f["name"] == direction and f["unit"] == "GB/s"]
    expect(len(rates) == len(sizes), "%s: %d GB/s rows" % (direction, len(rates)))
    expect(all(f["samples"] in (0, 3) for f in rates), "%s: repeats not honoured" % direction)

# Side by side with the raw call (on host: std::memcpy between the views), interleaved per repeat.
expect("std::memcpy" in bw["parameters"]["raw call"], "raw call parameter: %r" % bw["parameters"].get("raw call"))
for direction in ("h2d", "d2h"):
    raw = [f for f in bw["figures"] if f["name"] == "raw " + direction]
    expect([f["bytes"] for f in raw] == sizes, "raw %s sizes: %r" % (direction, [f["bytes"] for f in raw]))
    expect(all(f["unit"] == "GB/s" and "std::memcpy" in f["note"] for f in raw), "raw %s rows: %r" % (direction, raw))
    expect(raw[-1]["samples"] == 3 and raw[-1]["min"] <= raw[-1]["median"] <= raw[-1]["max"],
           "raw %s at %d bytes: %r" % (direction, sizes[-1], raw[-1]))
    ratios = [f for f in bw["figures"] if f["name"] == direction + " xfer / raw"]
    expect([f["bytes"] for f in ratios] == sizes, "%s ratio sizes: %r" % (direction, [f["bytes"] for f in ratios]))
    expect(all(f["unit"] == "x" and "xfer faster" in f["note"] for f in ratios), "%s ratios: %r" % (direction, ratios))
    largest = ratios[-1]
    expect(largest["samples"] == 3 and 0 < largest["min"] <= largest["median"] <= largest["max"],
           "%s ratio at %d bytes: %r" % (direction, sizes[-1], largest))
expect("raw h2d" in table and "h2d xfer/raw" in table and "d2h xfer/raw" in table,
       "table lacks the side-by-side rows:\n" + table)
expect(any(r["figure"] == "h2d xfer / raw" and r["unit"] == "x" and r["median"] for r in rows),
       "CSV lacks the h2d ratio rows")
expect("raw h2d + d2h of buffer a" in bw["verification"]["detail"], "raw copies not verified: %r" % bw["verification"])
print("ok")

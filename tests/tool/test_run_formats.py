# SPDX-License-Identifier: Apache-2.0
"""`xfer-tool run all --backend host` in table, CSV and JSON: every workflow runs and verifies;
JSON matches the schema; nothing on stderr when it is not a terminal (no progress, no errors).
Every format carries the paths the copies took (host: all host_memcpy), with the copies and
bytes each workflow makes; `run --log-copies` prints the library's line per copy on stderr."""
import csv
import json
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

# The CSV as Python's csv.DictReader (and pandas.read_csv, where installed) reads it, no options:
# the header row names the columns, every row is a figure with its workflow, unit and numbers.
with open(csv_path, newline="") as f:
    first_line = f.readline()
    f.seek(0)
    read = list(csv.DictReader(f))
expect(first_line.startswith("tool_version,library_version,backend,"), "CSV starts with %r" % first_line)
expect([r["workflow"] for r in read] == [r["workflow"] for r in rows] and len(read) == len(rows),
       "csv.DictReader reads other rows than the report has")
expect(set(r["workflow"] for r in read) == set(WORKFLOWS), "DictReader workflows: %r" % {r["workflow"] for r in read})
expect({"GB/s", "ms", "x", "count", "bytes", "ns"} <= {r["unit"] for r in read},
       "DictReader units: %r" % sorted({r["unit"] for r in read}))
h2d = [r for r in read if r["workflow"] == "bandwidth" and r["figure"] == "h2d" and r["unit"] == "GB/s"]
expect([int(r["bytes"]) for r in h2d] == [1024, 4096, 16384, 65536, 262144] and all(float(r["median"]) > 0 for r in h2d),
       "DictReader bandwidth h2d rows: %r" % h2d)
expect(all(r["backend"] == "host" and r["verification"] == "passed" for r in read), "DictReader rows: %r" % read[:2])
try:
    import pandas
except ImportError:
    pandas = None
if pandas is not None:
    frame = pandas.read_csv(csv_path)
    expect(list(frame.columns) == list(read[0].keys()) and len(frame) == len(read), "pandas.read_csv: %r" % frame)
    expect(set(frame["workflow"]) == set(WORKFLOWS), "pandas workflows: %r" % set(frame["workflow"]))

# --csv-metadata: the run's metadata first, as '#' lines (pandas: comment='#'), then the same header.
meta_path = os.path.join(args.workdir, "results-meta.csv")
run(args.tool, ["run", "roundtrip", "--backend", "host", "--format", "csv", "--csv-metadata", "-o", meta_path] + SMALL)
with open(meta_path, newline="") as f:
    lines = f.read().splitlines()
comments = [l for l in lines if l.startswith("#")]
expect(comments and lines[:len(comments)] == comments, "--csv-metadata: '#' lines not first:\n%s" % "\n".join(lines[:12]))
expect(lines[len(comments)] == first_line.rstrip("\r\n"), "--csv-metadata header: %r" % lines[len(comments)])
expect(any(l.startswith("# units: GB/s = 10^9 bytes/s") for l in comments), "--csv-metadata lacks the units line")
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

# Which path the copies took. SMALL: --size 1MiB, --repeats 3 (fixed), --warmup 1, so each timed
# body runs 4 times; --copies 64 of 4 KiB; overlap in 4 batches.
MiB = 1 << 20
runs = 1 + 3
expected = {
    # one clear of the output's device view, then per run h2d input + d2h result
    "roundtrip": (1 + 2 * runs, (1 + 2 * runs) * MiB),
    # per direction 4 blocking copies, 4 async ones, then 4 runs of one blocking and one async
    # copy beside host work; one fetch back to verify
    "sync-async": (2 * (runs + runs + 2 * runs) + 1, (2 * (runs + runs + 2 * runs) + 1) * MiB),
    # one clear of c, then per run h2d a, h2d b, d2h c
    "vector-add": (1 + 3 * runs, (1 + 3 * runs) * MiB),
    # per run a serial and a pipelined pass, each 4 batches in and out of 256 KiB
    "overlap": (runs * 2 * 4 * 2, runs * 2 * 4 * 2 * (MiB // 4)),
    # per method a clear and a fetch of the 256 KiB; per run 64 single copies, a batch of 64
    # entries (each counts), one coalesced copy
    "batching": (3 * 2 + runs * (64 + 64 + 1), (3 * 2 + runs * 3) * 64 * 4096),
    # per access pattern a clear of the output, the input to the device per run, a fetch back
    "access": (2 * (1 + runs + 1), 2 * (1 + runs + 1) * MiB),
}
for r in data["results"]:
    where = "%s on host" % r["workflow"]
    paths = r["paths"]
    expect(isinstance(paths, dict) and set(paths) == {"host_memcpy"},
           "%s: the host backend tags every copy host_memcpy: %r" % (where, paths))
    use = paths["host_memcpy"]
    expect(use["copies"] > 0 and use["bytes"] > 0, "%s: no copies counted: %r" % (where, use))
    expect(use["host_ns"] > 0, "%s: no host time counted: %r" % (where, use))
    expect(r["slow_copies"] == 0, "%s: host_memcpy counted as slow: %r" % (where, r["slow_copies"]))
    expect(r["registrations"] == 0, "%s: registrations on host: %r" % (where, r["registrations"]))
    if r["workflow"] in expected:
        copies, moved = expected[r["workflow"]]
        expect((use["copies"], use["bytes"]) == (copies, moved),
               "%s: %d copies of %d bytes counted, the workflow made %d of %d"
               % (where, use["copies"], use["bytes"], copies, moved))
# Every timed bandwidth copy is counted too: at least one h2d and one d2h per size and run.
bw_copies = bw["paths"]["host_memcpy"]["copies"]
expect(bw_copies >= 2 * len(sizes) * runs, "bandwidth: %d copies counted" % bw_copies)
expect(bw["paths"]["host_memcpy"]["bytes"] >= 2 * sum(sizes) * runs, "bandwidth bytes: %r" % bw["paths"])

# The table: one paths line per workflow, the same figures as JSON.
for r in data["results"]:
    block = table.split("== %s on host:" % r["workflow"])[1].split("\n== ")[0]
    lines = [l.strip() for l in block.splitlines() if l.strip().startswith("paths:")]
    use = r["paths"]["host_memcpy"]
    expect(len(lines) == 1 and lines[0].startswith("paths: host_memcpy %d copies " % use["copies"]),
           "%s: table paths line %r, JSON %r" % (r["workflow"], lines, use))
expect("paths: host_memcpy 9 copies 9 MiB\n" in table, "roundtrip's paths line:\n" + table)

# CSV: per workflow the path rows, counts as exact integers in the figure columns.
for wf in WORKFLOWS:
    by_figure = {row["figure"]: row for row in rows if row["workflow"] == wf}
    for figure, unit in (("path:host_memcpy:copies", "count"), ("path:host_memcpy:bytes", "bytes"),
                         ("path:host_memcpy:host_ns", "ns"), ("paths:slow_copies", "count"),
                         ("paths:registrations", "count")):
        row = by_figure.get(figure)
        expect(row is not None, "CSV of %s lacks %s" % (wf, figure))
        expect(row["unit"] == unit and row["samples"] == "1" and row["min"] == row["median"] == row["max"],
               "CSV %s %s: %r" % (wf, figure, row))
    json_use = next(r for r in data["results"] if r["workflow"] == wf)["paths"]["host_memcpy"]
    # --repeats fixes every loop, so the two runs made the same copies.
    expect(int(by_figure["path:host_memcpy:copies"]["median"]) == json_use["copies"] and
           int(by_figure["path:host_memcpy:bytes"]["median"]) == json_use["bytes"],
           "CSV and JSON of %s disagree: %r vs %r" % (wf, by_figure["path:host_memcpy:bytes"], json_use))
    expect(int(by_figure["paths:slow_copies"]["median"]) == 0, "CSV %s slow copies" % wf)
    expect(not any(f.startswith("path:") and not f.startswith("path:host_memcpy:") for f in by_figure),
           "CSV of %s has another path: %r" % (wf, sorted(by_figure)))
roundtrip_rows = {row["figure"]: row for row in rows if row["workflow"] == "roundtrip"}
expect(roundtrip_rows["path:host_memcpy:bytes"]["median"] == str(9 * MiB),
       "CSV roundtrip bytes: %r" % roundtrip_rows["path:host_memcpy:bytes"])

# --log-copies: the library's copy log on stderr, one line per copy call and path; the report
# on stdout is unchanged and records the setting.
proc = run(args.tool, ["run", "roundtrip", "--backend", "host", "--log-copies", "--format", "json"] + SMALL)
log = [l for l in proc.stderr.splitlines() if l.startswith("xfer: copy ")]
expect(len(log) == 9, "--log-copies: %d copy lines, the roundtrip made 9:\n%s" % (len(log), proc.stderr))
expect(all(" host:0 xfer_copy_async " in l and " path=host_memcpy " in l and " bytes=%d " % MiB in l
           and " copies=1 " in l for l in log), "--log-copies lines:\n" + "\n".join(log))
expect(sum(" h2d " in l for l in log) == 5 and sum(" d2h " in l for l in log) == 4,
       "--log-copies directions (a clear and 4 inputs to the device, 4 results back):\n" + "\n".join(log))
expect([l for l in proc.stderr.splitlines() if l and not l.startswith("xfer: copy ")] == ["PASS"],
       "--log-copies: other lines on stderr:\n" + proc.stderr)
logged = json.loads(proc.stdout)
expect(logged["results"][0]["paths"]["host_memcpy"]["copies"] == len(log), "log and statistics disagree")
config = {(c["section"], c["name"]): c for c in logged["run"]["config"]}
expect(config[("", "log")]["value"] == "copies" and config[("", "log")]["source"] == "environment",
       "--log-copies not recorded in the run's configuration: %r" % config.get(("", "log")))
print("ok")
